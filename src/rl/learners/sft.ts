// Supervised fine-tuning on a task's demonstrations (the warm start that RL begins from), and greedy evaluation
// on a split, on any Policy backend. Sequences are [BOS] prompt completion [EOS], right-padded to a fixed length
// so every step has the same shape; the loss covers the completion and its EOS only. On the GPU each step is one
// command buffer, and the loss is read back only every `logEvery` steps.

import type { Policy, SftBatch } from '../../model/policy';
import type { Tokenizer } from '../../io/tokenizer';
import { Rng } from '../../core/random';
import { textTokens } from '../../io/end-of-sequence';
import { encodePrompt } from '../../io/encode-prompt';

export { encodePrompt };
import type { Task, TaskItem } from '../../tasks';

export interface SftOptions {
  /** Optimizer steps. */
  steps: number;
  /** Demonstrations per step. */
  batchSize: number;
  /** Peak learning rate (linear warmup, then cosine decay to 10% of it). */
  lr: number;
  /** Warmup steps. */
  warmup: number;
  weightDecay: number;
  /** Global gradient-norm clip (undefined: none). */
  maxGradNorm?: number;
  seed: number;
  /** Fraction of demonstrations replaced by a corrupted (wrong) completion, in [0, 1]: weaker warm starts. */
  noise: number;
  /** Read the loss back every this many steps (and on the last). */
  logEvery: number;
}

export const SFT_DEFAULTS: SftOptions = {
  steps: 300,
  batchSize: 32,
  lr: 3e-3,
  warmup: 20,
  weightDecay: 0.01,
  maxGradNorm: 1,
  seed: 0,
  noise: 0,
  logEvery: 25,
};

export interface SftProgress {
  step: number;
  steps: number;
  /** Mean cross-entropy of the last logged step (nats per completion token). */
  loss: number;
  lr: number;
  elapsedMs: number;
}

/**
 * The most tokens a prompt of `promptChars` task characters can take: what encodePrompt adds around it (BOS, or the
 * chat template's own tokens) plus one per character. Task alphabets are printable ASCII, one token per character
 * in the character vocabulary and at most one in byte-level BPE (merges only shorten); other tokenizers get one
 * token of slack for a word-start marker (SentencePiece's Metaspace).
 */
export function promptTokenBound(tok: Tokenizer, promptChars: number, chat = false): number {
  return encodePrompt(tok, '', chat).length + promptChars + (tok.kind === 'char' ? 0 : 1);
}

/** Token ids of the prompt (encodePrompt), and of completion [EOS]. */
export function encodeExample(
  tok: Tokenizer,
  prompt: string,
  completion: string,
  chat = false,
): { prompt: number[]; completion: number[] } {
  return { prompt: encodePrompt(tok, prompt, chat), completion: [...tok.encode(completion), tok.eosId] };
}

/**
 * Sequence length that holds any item of the task in `tok`'s tokens: the prompt's bound (promptTokenBound: BOS +
 * prompt for the character vocabulary) + completion + EOS, with one token of slack for tokenizers other than the
 * character vocabulary (as for the prompt).
 */
export function sequenceLength(task: Task, tok: Tokenizer): number {
  return promptTokenBound(tok, task.maxPromptLength) + task.maxCompletionLength + 1 + (tok.kind === 'char' ? 0 : 1);
}

/** Learning rate at `step` (1-based): linear warmup, then cosine decay to 10% of the peak. */
export function learningRate(step: number, opts: Pick<SftOptions, 'lr' | 'warmup' | 'steps'>): number {
  if (step <= opts.warmup) return (opts.lr * step) / Math.max(1, opts.warmup);
  const progress = (step - opts.warmup) / Math.max(1, opts.steps - opts.warmup);
  return opts.lr * (0.1 + 0.45 * (1 + Math.cos(Math.PI * Math.min(1, progress))));
}

/** A wrong completion of the same alphabet: one character changed, or the answer cut short. */
function corrupt(answer: string, alphabet: string, rng: Rng): string {
  if (answer.length > 1 && rng.next() < 0.3) return answer.slice(0, 1 + rng.int(answer.length - 1));
  const chars = [...answer];
  const i = rng.int(Math.max(1, chars.length));
  let c = alphabet[rng.int(alphabet.length)];
  if (c === chars[i]) c = alphabet[(alphabet.indexOf(c) + 1) % alphabet.length];
  chars[i] = c;
  return chars.join('');
}

/**
 * Trains the model on demonstrations from the task's train split; yields progress at every logged step.
 * Deterministic for a seed on a given device.
 */
export async function* trainSft(
  policy: Policy,
  task: Task,
  tok: Tokenizer,
  options: Partial<SftOptions> = {},
): AsyncGenerator<SftProgress> {
  const opts = { ...SFT_DEFAULTS, ...options };
  const B = opts.batchSize;
  const T = sequenceLength(task, tok);
  if (T > policy.config.contextLength)
    throw new Error(`sft: task sequences need ${T} positions, the model's context is ${policy.config.contextLength}`);
  const rng = new Rng(opts.seed);
  const N = B * T;
  const batch: SftBatch = { B, T, tokens: new Uint32Array(N), targets: new Uint32Array(N), mask: new Float32Array(N) };
  const t0 = performance.now();
  for (let step = 1; step <= opts.steps; step++) {
    batch.tokens.fill(tok.padId);
    batch.targets.fill(0);
    batch.mask.fill(0);
    for (let b = 0; b < B; b++) {
      const item = task.sample(rng, 'train');
      const answer = rng.next() < opts.noise ? corrupt(task.solve(item), task.alphabet, rng) : task.solve(item);
      const ex = encodeExample(tok, item.prompt, answer);
      const seq = [...ex.prompt, ...ex.completion];
      // A longer sequence would run into the next row of the batch.
      if (seq.length > T)
        throw new Error(
          `sft: ${JSON.stringify(item.prompt)} + its answer take ${seq.length} tokens, more than the ${T} a row holds`,
        );
      for (let t = 0; t < seq.length; t++) batch.tokens[b * T + t] = seq[t];
      // Position t predicts seq[t + 1]; only completion tokens (and EOS) are supervised.
      for (let t = ex.prompt.length - 1; t < seq.length - 1; t++) {
        batch.targets[b * T + t] = seq[t + 1];
        batch.mask[b * T + t] = 1;
      }
    }
    const lr = learningRate(step, opts);
    const log = step % opts.logEvery === 0 || step === opts.steps;
    const loss = await policy.sftStep(batch, {
      lr,
      weightDecay: opts.weightDecay,
      maxGradNorm: opts.maxGradNorm,
      readLoss: log,
    });
    if (log) {
      if (!Number.isFinite(loss)) throw new Error(`sft: loss became ${loss} at step ${step} (lower the learning rate)`);
      yield { step, steps: opts.steps, loss: loss!, lr, elapsedMs: performance.now() - t0 };
    }
  }
}

export interface EvalResult {
  /** Fraction of items whose greedy completion is correct (accuracy part of the verdict = 1). */
  accuracy: number;
  meanReward: number;
  n: number;
  samples: { prompt: string; completion: string; reward: number; reason: string }[];
}

/** Greedy completions on `n` items of a split, verified by the task. Batches of `batch` prompts. */
export async function evaluateGreedy(
  policy: Policy,
  task: Task,
  tok: Tokenizer,
  opts: { n: number; seed: number; split?: 'train' | 'heldout'; batch?: number },
): Promise<EvalResult> {
  const rng = new Rng(opts.seed);
  const items: TaskItem[] = Array.from({ length: opts.n }, () => task.sample(rng, opts.split ?? 'heldout'));
  const batch = opts.batch ?? 64;
  let correct = 0;
  let reward = 0;
  const samples: EvalResult['samples'] = [];
  for (let i = 0; i < items.length; i += batch) {
    const chunk = items.slice(i, i + batch);
    const prompts = chunk.map((it) => encodeExample(tok, it.prompt, '').prompt);
    const S = task.maxCompletionLength + 1;
    const out = await policy.generate(prompts, {
      maxNewTokens: S,
      sampler: { temperature: 1, greedy: true, seed: 0 },
      eosId: tok.eosId,
      eosIds: tok.eosIds,
      padId: tok.padId,
    });
    chunk.forEach((it, r) => {
      const ids = textTokens(out.tokens.subarray(r * S, r * S + out.lengths[r]), tok);
      const completion = tok.decode(ids, { skipSpecialTokens: true });
      // A completion cut at the length limit (no EOS) counts as wrong, whatever its prefix says.
      const v = out.finished[r]
        ? task.verify(it, completion)
        : { reward: 0, parts: { accuracy: 0 }, reason: 'no EOS within the length limit' };
      correct += v.parts.accuracy === 1 ? 1 : 0;
      reward += v.reward;
      if (samples.length < 8) samples.push({ prompt: it.prompt, completion, reward: v.reward, reason: v.reason });
    });
  }
  return { accuracy: correct / items.length, meanReward: reward / items.length, n: items.length, samples };
}
