// The speedrun readout of a run (the RLHF book's code/policy_gradients/speedrun.py, natolambert/rlhf-book a66b0bf):
// the step and the training wall time at which the 100-step rolling mean of the reward first reaches a target
// (`speedrun_target`), and the best rolling mean so far. A pure function over a run's per-step reward and step_time,
// wherever they are kept (the CLI's metrics.jsonl, the page's metric table); no rolling mean exists before step 100.

/** Rollout steps in the rolling mean (the book's 100). */
export const SPEEDRUN_WINDOW = 100;

/** One rollout step's reward and wall time. */
export interface SpeedrunPoint {
  step: number;
  reward: number;
  /** Seconds the step took (the step_time metric). */
  seconds: number;
}

export interface Speedrun {
  window: number;
  /** The target (null: none set; the best rolling mean is still reported). */
  target: number | null;
  /** Rollout steps seen. */
  steps: number;
  /** First step whose rolling mean is at or above the target (null: not reached, or no target). */
  reachedStep: number | null;
  /** Training seconds up to and including that step (the sum of step_time). */
  reachedSeconds: number | null;
  /** The highest rolling mean and its step (null before `window` steps). */
  best: { mean: number; step: number } | null;
}

/**
 * The readout over `points`, one per rollout step in step order (a step given twice keeps its last point, as a
 * rewound run rewrites it). A step whose reward is not finite counts as missing: the window then holds fewer values.
 */
export function speedrunOf(
  points: readonly SpeedrunPoint[],
  target: number | null,
  window = SPEEDRUN_WINDOW,
): Speedrun {
  const byStep = new Map<number, SpeedrunPoint>();
  for (const p of points) byStep.set(p.step, p);
  const steps = [...byStep.values()].sort((a, b) => a.step - b.step);
  const out: Speedrun = { window, target, steps: steps.length, reachedStep: null, reachedSeconds: null, best: null };
  let seconds = 0;
  let sum = 0;
  let count = 0;
  for (let i = 0; i < steps.length; i++) {
    const p = steps[i];
    seconds += Number.isFinite(p.seconds) ? p.seconds : 0;
    if (Number.isFinite(p.reward)) {
      sum += p.reward;
      count++;
    }
    if (i >= window) {
      const gone = steps[i - window].reward;
      if (Number.isFinite(gone)) {
        sum -= gone;
        count--;
      }
    }
    if (i + 1 < window || count === 0) continue;
    const mean = sum / count;
    if (!out.best || mean > out.best.mean) out.best = { mean, step: p.step };
    if (target !== null && out.reachedStep === null && mean >= target) {
      out.reachedStep = p.step;
      out.reachedSeconds = seconds;
    }
  }
  return out;
}

/** The readout in one line, as the CLI prints it and the page shows it. */
export function speedrunText(s: Speedrun): string {
  const w = `${s.window}-step rolling reward`;
  if (!s.best) return `speedrun: no ${w} yet (${s.steps} of ${s.window} steps)`;
  const best = `best ${s.best.mean.toFixed(3)} at step ${s.best.step}`;
  if (s.target === null) return `speedrun: ${best} (${w}; set speedrun_target for a finish line)`;
  if (s.reachedStep === null) return `speedrun: the ${w} has not reached ${s.target} (${best})`;
  return `speedrun: the ${w} reached ${s.target} at step ${s.reachedStep}, after ${s.reachedSeconds!.toFixed(1)} s of training (${best})`;
}
