// The step estimate (src/schema/step-estimate.ts) beside the GRPO steps the bench measures: what the page would show
// on this adapter (the throughput probe's figures, with the adapter kind's calibration) and what the kind's default
// figures give, for the whole step and by phase. So a lent GPU's `npm run bench:gpu` measures the estimate too, and
// the figures to refit it come from the same run (scripts/calibrate-step-estimate.ts does the same on the presets
// and the tiny-qwen2 experiment, with the factor apart).

import type { EstimateCheck } from '../schema/bench-report';
import type { RLConfig } from '../schema/config';
import type { ModelConfig } from '../schema/model-config';
import { estimateStepSeconds, stepWork, type StepEstimate, type Throughput } from '../schema/step-estimate';

/** The figures an estimate check compares: the probe's on this adapter, and the adapter kind's defaults. */
export interface EstimateFigures {
  probe: Throughput;
  assumed: Throughput;
}

/** A step's measured phases as the trainer's metrics time them (timing_s/...). */
export interface MeasuredPhases {
  gen: number;
  old_log_prob: number;
  /** update_actor: the forward, objective, backward and AdamW (the estimate's update_actor + optimizer). */
  update: number;
}

/** An estimate's seconds in the trainer's phases: gen, old_log_prob, and the update with AdamW. */
export function estimatedPhases(e: StepEstimate): MeasuredPhases {
  const of = (phase: string) => e.phases.find((p) => p.phase === phase)?.seconds ?? 0;
  return { gen: of('gen'), old_log_prob: of('old_log_prob'), update: of('update_actor') + of('optimizer') };
}

/** One measured step of `config` on `model` beside the estimates of it from both sets of figures. */
export function estimateCheck(
  step: string,
  config: RLConfig,
  model: ModelConfig,
  measured: { stepS: number; phases: MeasuredPhases },
  figures: EstimateFigures,
): EstimateCheck {
  const work = stepWork(config, model);
  const probe = estimateStepSeconds(work, figures.probe);
  const assumed = estimateStepSeconds(work, figures.assumed);
  const byPhase = estimatedPhases(probe);
  return {
    step,
    measuredS: measured.stepS,
    probe: { seconds: probe.seconds, range: probe.range },
    assumed: { seconds: assumed.seconds, range: assumed.range },
    phases: (['gen', 'old_log_prob', 'update'] as const).map((phase) => ({
      phase,
      measuredS: measured.phases[phase],
      probeS: byPhase[phase],
    })),
  };
}
