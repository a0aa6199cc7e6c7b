// The trainer's output: the typed metric stream (one record per optimizer step, every name declared in the metric
// catalog, src/schema/metrics.ts, and explained in docs/metrics.md), the per-token records of sampled groups that the rollout inspector shows, and evaluation results.
// Plain data only (numbers, strings, typed arrays), so records cross the worker boundary and land in IndexedDB
// and JSONL exports unchanged. Not the trainer itself (trainer.ts).

import type { StepHistograms } from './histograms';
import type { Metrics } from './metrics';

/** Metric name -> value, typed by the catalog (reward, entropy, clip_ratio/low_mean, timing_s/<phase>, ...). */
export type { Metrics };
/** A rollout step's histograms by id, with the bin edges of src/schema/histograms.ts. */
export type { StepHistograms };

/** The per-token quantities a completion's tokens can be looked at by (the inspector's colourings, a lesson's highlights). */
export const TOKEN_PLANES = ['probability', 'entropy', 'ratio', 'advantage', 'clip', 'kl', 'loss'] as const;
export type TokenPlane = (typeof TOKEN_PLANES)[number];

/** Per-token planes of one completion, each of length `length` (the completion's tokens, EOS included). */
export interface TokenRecords {
  /** Token ids of the completion. */
  tokens: Uint32Array;
  /** log pi_old: the trainer's log-prob at rollout-time parameters. */
  logpOld: Float32Array;
  /** log pi_theta at the last optimizer step that used this completion. */
  logp: Float32Array;
  /** The sampler's log-prob (equals logpOld when trainer and sampler agree). */
  logpSampler: Float32Array;
  /** Full-vocabulary entropy H_t of pi_theta. */
  entropy: Float32Array;
  /** The ratio that entered the token's loss (rho, GSPO's s_i or GMPO's g_i). */
  ratio: Float32Array;
  /** A_{i,t}. */
  advantage: Float32Array;
  /** -1 clipped low, +1 clipped high (or CISPO-capped), 0 not clipped. */
  clipSide: Int8Array;
  /** The KL estimate to the reference (0 without a reference model). */
  kl: Float32Array;
  /** The token's share of the loss: w m (policy + beta k - alpha H). Summed over a step's tokens: the loss. */
  loss: Float32Array;
  /** The aggregation weight w m (0 for masked-out tokens). */
  weight: Float32Array;
  /** PPO only: the critic's V_old at the token (else empty). */
  value: Float32Array;
}

/** One completion of a sampled group. */
export interface CompletionRecord {
  /** Decoded text (EOS removed). */
  text: string;
  /** Tokens in the completion, EOS included. */
  length: number;
  /** Ended with EOS (false: cut at max_completion_length). */
  finished: boolean;
  /** r_i after overlong shaping (what the advantage used). */
  reward: number;
  /** Reward components by name (accuracy, format, overlong, ...). */
  rewards: Record<string, number>;
  /** The verifier's one-line reason. */
  reason: string;
  /** True when excluded from the loss (mask_truncated_completions). */
  masked: boolean;
  tokens: TokenRecords;
}

/** A prompt and its G completions, as the inspector shows them. */
export interface GroupRecord {
  /** Index of the group in the step's batch. */
  index: number;
  prompt: string;
  /** A correct answer (the task's solver). */
  answer: string;
  completions: CompletionRecord[];
}

/** One completion of a batch in brief, as the inspector's all-groups view lists it. */
export interface CompletionSummary {
  /** Decoded text (EOS removed). */
  text: string;
  /** Tokens, EOS included. */
  length: number;
  finished: boolean;
  /** r_i after overlong shaping. */
  reward: number;
  /** The verifier judged it correct and it ended with EOS (src/rl/observation/dynamics.ts completionPasses). */
  passed: boolean;
  /** Its advantage: the mean of A_{i,t} over its loss tokens (every token's A under sequence-level estimators); 0 when masked out. */
  advantage: number;
  /** Excluded from the loss (mask_truncated_completions). */
  masked: boolean;
}

/** A batch's group in brief: its prompt and every completion without token planes. */
export interface GroupSummary {
  /** Index of the group in the step's batch. */
  index: number;
  prompt: string;
  answer: string;
  completions: CompletionSummary[];
}

/** Held-out evaluation: greedy accuracy and the unbiased pass@k curve from eval_num_generations samples per prompt. */
export interface EvalRecord {
  /** Rollout step the evaluation ran after (0: before training). */
  step: number;
  /** Held-out prompts evaluated. */
  items: number;
  /** Greedy (temperature 0) accuracy on the held-out prompts. */
  accuracy: number;
  /** Mean reward of the greedy completions. */
  reward: number;
  /** pass@k for k = 1..eval_num_generations (index k-1), from sampled completions at the training temperature. */
  passAtK: number[];
  /**
   * The per-prompt solve-rate histogram: index c counts the held-out prompts that exactly c of their n =
   * eval_num_generations samples pass (length n + 1). Absent in records made before it was kept.
   */
  solvedBy?: number[];
  /**
   * The same greedy evaluation with every weight matrix's update replaced by its rank-1 approximation
   * W_0 + sigma_1 u_1 v_1^T (rank1_eval; after step 0 only).
   */
  rank1?: { accuracy: number; reward: number };
}

/** One optimizer step of the trainer. */
export interface StepRecord {
  kind: 'step';
  /** Rollout step (batch) this optimizer step belongs to, 1-based. */
  step: number;
  /** Optimizer step, 1-based over the whole run. */
  optimizerStep: number;
  /**
   * This optimizer step's index within its rollout step, 0-based (epoch-major: epoch * num_minibatches + minibatch).
   * With `updates`, a chart places it at x = step - 1 + (update + 1) / updates, so a rollout step's updates share
   * the interval (step - 1, step] and its last lands on x = step.
   */
  update: number;
  /** How many optimizer steps its rollout step made (num_iterations x its minibatches). */
  updates: number;
  /** Epoch (0..num_iterations-1) and minibatch (0..num_minibatches-1) within the batch. */
  epoch: number;
  minibatch: number;
  /** Every metric of this optimizer step; the batch's rollout metrics repeat on each of its optimizer steps. */
  metrics: Metrics;
  /** Sampled groups with per-token records: on the last optimizer step of a batch only. */
  groups?: GroupRecord[];
  /** Every group of the batch in brief (no token planes): on the last optimizer step of a batch only. */
  batch?: GroupSummary[];
  /** The rollout step's histograms (entropy, advantage; src/schema/histograms.ts): on its last optimizer step only. */
  histograms?: StepHistograms;
  /** Evaluation after this batch, when one ran. */
  eval?: EvalRecord;
  /** The evaluation before any training (step 0), on the first record of a run that evaluates. */
  initialEval?: EvalRecord;
}

/** The evaluations a record carries, in step order: the one before training (step 0), then the one after its batch. */
export function evalsOf(r: Pick<StepRecord, 'initialEval' | 'eval'>): EvalRecord[] {
  const out: EvalRecord[] = [];
  if (r.initialEval) out.push(r.initialEval);
  if (r.eval) out.push(r.eval);
  return out;
}

/** Everything the trainer yields. */
export type TrainerEvent = StepRecord;
