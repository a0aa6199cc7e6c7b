// One full GRPO step of the RL trainer, driven as every run is (a RunSession), split by the trainer's own phases (timing_s/gen,
// old_log_prob, adv, update_actor): B prompts x G completions of up to L tokens on a fresh model of a preset.
// The target shape is the `small` preset with B*G = 64 completions of up to 64 tokens. Not the trainer.

import type { GpuContext } from '../gpu';
import { NO_SINK, RunSession } from '../engine/run-session';
import { CHAR_TOKENIZER_PATH, type AssetLoader } from '../engine/start-policy';
import { MODEL_PRESETS, type ModelPresetName } from '../schema/model-config';
import { buildCharTokenizerJson } from '../io/tokenizer';
import { resolveConfig, type RLConfig } from '../schema/config';
import { median } from './measure';
import type { BenchRow } from '../schema/bench-report';

/** The only file a fresh model's run reads: the character vocabulary, built in memory (the bench reads no site files). */
const CHAR_ONLY: AssetLoader = {
  text: async (path) => {
    if (path !== CHAR_TOKENIZER_PATH) throw new Error(`the bench reads no ${path}`);
    return JSON.stringify(buildCharTokenizerJson());
  },
  bytes: async (path) => {
    throw new Error(`the bench reads no ${path}`);
  },
};

export interface GrpoShape {
  /** Prompts per step (train_batch_size). */
  prompts: number;
  /** Completions per prompt (num_generations). */
  generations: number;
  /** Longest completion, EOS included (max_completion_length). */
  maxTokens: number;
}

/** The shape a preset's GRPO step is measured at: 8 x 8 = 64 completions of up to 64 tokens (fewer if the context is short). */
export function grpoShape(preset: ModelPresetName, quick = false): GrpoShape {
  if (quick) return { prompts: 2, generations: 2, maxTokens: 8 };
  return { prompts: 8, generations: 8, maxTokens: Math.min(64, MODEL_PRESETS[preset].contextLength - 16) };
}

/** The trainer's phases, in the order a step runs them, with what each covers. */
const PHASES: [string, string][] = [
  ['gen', 'rollouts: prefill + decode + sampling, rewards'],
  ['old_log_prob', 'scoring the batch (reference model for the KL)'],
  ['adv', 'advantages (CPU)'],
  ['update_actor', 'forward, objective, backward, AdamW'],
  ['testing', 'held-out evaluation'],
];

/** The config of the bench's GRPO step: copy task, the 'grpo' preset, no evaluation, `1 + reps` steps. */
export function grpoBenchConfig(preset: ModelPresetName, shape: GrpoShape, reps: number): RLConfig {
  return resolveConfig('grpo', {
    model: preset,
    task: 'copy',
    train_batch_size: shape.prompts,
    num_generations: shape.generations,
    max_completion_length: shape.maxTokens,
    steps: reps + 1,
    eval_every: 0,
    seed: 1,
  });
}

/**
 * Runs `1 + reps` GRPO steps (copy task, the 'grpo' preset, no evaluation) on a fresh model and reports the median
 * step and the median time of each phase over the last `reps` (the first step compiles pipelines).
 */
export async function benchGrpoStep(
  ctx: GpuContext,
  preset: ModelPresetName,
  shape: GrpoShape,
  reps: number,
): Promise<Omit<BenchRow, 'preset'>[]> {
  const config = grpoBenchConfig(preset, shape, reps);
  // A fresh model of the preset (checkpoint null), as a run of it would start.
  const session = await RunSession.open(
    { config, backend: 'webgpu', divergence: 'stop', inspectGroups: 0 },
    { assets: CHAR_ONLY, sink: NO_SINK, device: async () => ctx },
  );
  const samples: Record<string, number>[] = [];
  try {
    for (let i = 0; i < reps + 1; i++) {
      const o = await session.runStep();
      if (o.kind === 'diverged') throw new Error(o.message);
      if (i > 0) samples.push(o.records[o.records.length - 1].metrics);
    }
  } finally {
    session.destroy();
  }
  const completions = shape.prompts * shape.generations;
  const what = `${shape.prompts} prompts x ${shape.generations} = ${completions} completions, up to ${shape.maxTokens} tokens`;
  const stepMs = median(samples.map((m) => m.step_time)) * 1000;
  const rows: Omit<BenchRow, 'preset'>[] = [];
  let covered = 0;
  for (const [phase, note] of PHASES) {
    const xs = samples.map((m) => m[`timing_s/${phase}`]).filter((x): x is number => typeof x === 'number');
    if (xs.length === 0) continue;
    const ms = median(xs) * 1000;
    covered += ms;
    rows.push({ section: 'grpo', name: phase, shape: what, ms, samples: xs.length, method: 'wall', note });
  }
  rows.push({
    section: 'grpo',
    name: 'other',
    shape: what,
    ms: Math.max(0, stepMs - covered),
    samples: samples.length,
    method: 'wall',
    note: 'step minus the phases above (host bookkeeping, records)',
  });
  rows.push({
    section: 'grpo',
    name: 'step',
    shape: what,
    ms: stepMs,
    samples: samples.length,
    method: 'wall',
    tokensPerS: median(samples.map((m) => m['perf/rollout_tokens_per_s'])),
    note: `rollout tokens/s ${median(samples.map((m) => m['perf/rollout_tokens_per_s'])).toFixed(0)}`,
  });
  return rows;
}
