// The contract every verifiable environment in src/tasks/ meets: items, verdicts, the deterministic
// train/held-out split, and `defineTask`, the factory that gives every task the same guard rails
// (prompt parsing, empty/overlong/foreign-character rejection, weighted reward, no exceptions from verify).
// Pure TypeScript: no GPU, no DOM, no tokenizer. Completions are plain strings with the EOS already removed.

import type { Rng } from '../core/random';

/** Which side of the deterministic split an item belongs to. */
export type Split = 'train' | 'heldout';

/** JSON-safe metadata values: items cross the worker boundary and end up in rollout exports. */
export type MetaValue = string | number | boolean | readonly number[] | readonly string[];

/** One problem instance. */
export interface TaskItem {
  /** What the model is conditioned on, e.g. `"12+345="`. The source of truth: verify and solve re-parse it. */
  readonly prompt: string;
  /** A canonical correct completion (what `solve` returns), without any end-of-sequence token. */
  readonly answer: string;
  /** Optional, informational (for display and export); verify and solve never read it. */
  readonly meta?: Readonly<Record<string, MetaValue>>;
}

/** Reward components, each in [0, 1]. `accuracy` and `format` always exist; tasks may add informational parts. */
export interface VerdictParts {
  accuracy: number;
  format: number;
  [part: string]: number;
}

/** The verifier's judgement of one completion. */
export interface Verdict {
  /** weights.accuracy * parts.accuracy + weights.format * parts.format, clamped to [0, 1]. */
  reward: number;
  parts: VerdictParts;
  /** Human-readable, one line: why this reward (shown in the rollout inspector). */
  reason: string;
}

/** How the reward combines the parts. accuracy + format = 1, so a correct, well-formed completion scores 1. */
export interface RewardWeights {
  readonly accuracy: number;
  readonly format: number;
}

/** The difficulty knob of one task: an integer in [min, max]. */
export interface DifficultyRange {
  readonly min: number;
  readonly max: number;
  readonly default: number;
  /** What the number means, e.g. "digits per operand". */
  readonly meaning: string;
}

/** A verifiable environment at one difficulty. */
export interface Task {
  /** Registry name, e.g. `"addition"`. */
  readonly name: string;
  /** One line for the task picker. */
  readonly description: string;
  /** The difficulty this instance was created with (an integer within `difficultyRange`). */
  readonly difficulty: number;
  readonly difficultyRange: DifficultyRange;
  /**
   * Every character that can appear in this task's prompts and correct completions, at any difficulty,
   * sorted by code point. All printable ASCII (32..126). Completions with other characters score 0.
   */
  readonly alphabet: string;
  readonly weights: RewardWeights;
  /** Every reward function (verdict part) this task scores, accuracy and format first: what reward_weights may name. */
  readonly rewardNames: readonly string[];
  /** Longest prompt this instance generates (characters). */
  readonly maxPromptLength: number;
  /**
   * Longest completion this instance's verifier accepts for its items (characters, EOS excluded): a sensible
   * `max_completion_length` for rollouts. Correct answers are shorter; the slack lets a wrong-length
   * completion end on its own rather than be truncated.
   */
  readonly maxCompletionLength: number;
  /**
   * True when train and held-out items never coincide. False only for tasks whose item space is too small
   * to split (the bandit has a single prompt), where both splits return the same items.
   */
  readonly disjointSplits: boolean;
  /** Draws one item of the given split. Deterministic given the rng state; advances the rng. */
  sample(rng: Rng, split: Split): TaskItem;
  /** Scores a completion for an item. Never throws: bad input gets reward 0 and a reason. */
  verify(item: TaskItem, completion: string): Verdict;
  /** A correct demonstration completion for the item. Throws only if the prompt is not one of this task's. */
  solve(item: TaskItem): string;
  /** The split an item belongs to (a pure function of its prompt), or null if the prompt is not this task's. */
  splitOf(item: TaskItem): Split | null;
  /**
   * The teacher id the item's prompt names (multi-teacher distillation routes it to that teacher), or null: the
   * default teacher scores it. A prompt list's teacher_id column; every generated task is one source, so null.
   */
  teacherId(item: TaskItem): string | null;
}

/** What a task's `check` reports before the weights are applied. */
export interface Check {
  accuracy: number;
  format: number;
  reason: string;
  /** Extra informational parts (e.g. per-position accuracy); they do not enter the reward. */
  extra?: Readonly<Record<string, number>>;
}

/**
 * The pieces a task supplies; `defineTask` turns them into a `Task` factory. `P` is the parsed problem
 * (e.g. the two operands). Everything is a pure function of its arguments.
 */
export interface TaskDefinition<P> {
  name: string;
  description: string;
  difficulty: DifficultyRange;
  /** Characters of prompts and correct completions over all difficulties (order does not matter). */
  alphabet: string;
  weights: RewardWeights;
  /** The names of the informational parts `check` adds besides accuracy and format (its `extra` keys). */
  extraRewards: readonly string[];
  disjointSplits: boolean;
  maxPromptLength(difficulty: number): number;
  maxCompletionLength(difficulty: number): number;
  /** A random problem, or null to ask for another draw (rejection sampling). */
  draw(rng: Rng, difficulty: number): P | null;
  render(problem: P): string;
  /** Inverse of render; null for anything render could not have produced. */
  parse(prompt: string): P | null;
  /** Canonical identity of a problem for the split (e.g. operands sorted, so a+b and b+a share a side). */
  key(problem: P): string;
  /** A correct completion, or null if the problem has none (then `draw`'s result is rejected). */
  solve(problem: P, difficulty: number): string | null;
  /** Completions longer than this are rejected as overlong. */
  completionLimit(problem: P): number;
  /** Judges a non-empty, not overlong completion made of alphabet characters. */
  check(problem: P, completion: string, difficulty: number): Check;
  meta?(problem: P, difficulty: number): Record<string, MetaValue>;
  /** The teacher id a problem's prompt names (Task.teacherId); absent: none, the default teacher scores every prompt. */
  teacherId?(problem: P): string | null;
}

/** A task before a difficulty is chosen: what the registry holds. */
export interface TaskFactory {
  readonly name: string;
  readonly description: string;
  readonly difficultyRange: DifficultyRange;
  readonly alphabet: string;
  /** Every reward function (verdict part) the task scores, accuracy and format first: what reward_weights may name. */
  readonly rewardNames: readonly string[];
  /** The task at a difficulty (an integer in range; throws RangeError otherwise). */
  create(difficulty?: number): Task;
}

/** One in HELDOUT_MODULUS problems (by hash of the split key) is held out: 10%. */
export const HELDOUT_MODULUS = 10;

/** Draws `sample` makes before giving up on finding an item of the requested split. */
export const MAX_SAMPLE_DRAWS = 100_000;

/**
 * 32-bit hash of a string: FNV-1a over UTF-16 code units followed by murmur3's finalizer, so that
 * `hash % 10` is well mixed even for keys that differ only in their last character.
 */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The split of a problem, from its canonical key (prefixed with the task name so tasks split independently):
 * held-out iff hashString(`${task}|${key}`) % HELDOUT_MODULUS === 0. Pure and stable across versions:
 * changing it would leak held-out items into training runs made before the change.
 */
export function splitOfKey(taskName: string, key: string): Split {
  return hashString(`${taskName}|${key}`) % HELDOUT_MODULUS === 0 ? 'heldout' : 'train';
}

/** A zero-reward verdict with a reason (for malformed, empty, overlong or rule-breaking completions). */
export function rejection(reason: string, extra?: Readonly<Record<string, number>>): Verdict {
  return { reward: 0, parts: { ...extra, accuracy: 0, format: 0 }, reason };
}

/** `s` shown safely in a reason: quoted, escaped, cut to `max` characters. */
export function show(s: string, max = 24): string {
  const cut = s.length > max ? `${s.slice(0, max)}...` : s;
  return JSON.stringify(cut);
}

/**
 * An exact-match check for tasks whose answer is one string: accuracy 1 iff the completion equals `expected`
 * and the format holds. `extra.positions` is the fraction of `expected`'s characters matched position by
 * position (aligned left, or right for numbers), a dense signal the reward does not use.
 */
export function exactMatch(
  expected: string,
  completion: string,
  format: { ok: boolean; why: string },
  align: 'left' | 'right' = 'left',
): Check {
  let same = 0;
  const n = Math.max(expected.length, completion.length);
  for (let i = 0; i < n; i++) {
    const e = align === 'left' ? expected[i] : expected[expected.length - n + i];
    const c = align === 'left' ? completion[i] : completion[completion.length - n + i];
    if (e !== undefined && e === c) same++;
  }
  const positions = n === 0 ? 0 : same / n;
  if (!format.ok) return { accuracy: 0, format: 0, reason: format.why, extra: { positions } };
  if (completion === expected) return { accuracy: 1, format: 1, reason: 'correct', extra: { positions } };
  return {
    accuracy: 0,
    format: 1,
    reason: `wrong: expected ${show(expected)}, got ${show(completion)}`,
    extra: { positions },
  };
}

function sortedAlphabet(chars: string): string {
  return [...new Set(chars)].sort((a, b) => a.charCodeAt(0) - b.charCodeAt(0)).join('');
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

function checkDifficulty(name: string, range: DifficultyRange, d: number): void {
  if (!Number.isInteger(d) || d < range.min || d > range.max) {
    throw new RangeError(
      `task "${name}": difficulty must be an integer in [${range.min}, ${range.max}] (${range.meaning}), got ${d}`,
    );
  }
}

/** Builds a task factory from a definition, adding the shared sampling, split and verification rules. */
export function defineTask<P>(def: TaskDefinition<P>): TaskFactory {
  const alphabet = sortedAlphabet(def.alphabet);
  const allowed = new Set(alphabet);
  const w = def.weights;
  if (Math.abs(w.accuracy + w.format - 1) > 1e-12 || w.accuracy < 0 || w.format < 0) {
    throw new Error(`task "${def.name}": weights must be non-negative and sum to 1`);
  }
  checkDifficulty(def.name, def.difficulty, def.difficulty.default);
  const rewardNames: readonly string[] = ['accuracy', 'format', ...def.extraRewards];

  const create = (difficulty: number = def.difficulty.default): Task => {
    checkDifficulty(def.name, def.difficulty, difficulty);

    const verify = (item: TaskItem, completion: string): Verdict => {
      try {
        if (typeof completion !== 'string') return rejection('completion is not a string');
        const problem = typeof item?.prompt === 'string' ? def.parse(item.prompt) : null;
        if (problem === null) return rejection(`prompt ${show(String(item?.prompt))} is not a ${def.name} prompt`);
        if (completion.length === 0) return rejection('empty completion');
        const limit = def.completionLimit(problem);
        if (completion.length > limit) {
          return rejection(`overlong: ${completion.length} characters, limit ${limit}`);
        }
        for (const ch of completion) {
          if (!allowed.has(ch)) return rejection(`character ${show(ch)} is not in the ${def.name} alphabet`);
        }
        const c = def.check(problem, completion, difficulty);
        const accuracy = clamp01(c.accuracy);
        const format = clamp01(c.format);
        return {
          reward: clamp01(w.accuracy * accuracy + w.format * format),
          parts: { ...c.extra, accuracy, format },
          reason: c.reason,
        };
      } catch (e) {
        // A verifier bug must not kill a training run; it shows up in the inspector instead.
        return rejection(`internal verifier error: ${e instanceof Error ? e.message : String(e)}`);
      }
    };

    return {
      name: def.name,
      description: def.description,
      difficulty,
      difficultyRange: def.difficulty,
      alphabet,
      weights: w,
      rewardNames,
      maxPromptLength: def.maxPromptLength(difficulty),
      maxCompletionLength: def.maxCompletionLength(difficulty),
      disjointSplits: def.disjointSplits,
      sample(rng: Rng, split: Split): TaskItem {
        for (let i = 0; i < MAX_SAMPLE_DRAWS; i++) {
          const problem = def.draw(rng, difficulty);
          if (problem === null) continue;
          if (def.disjointSplits && splitOfKey(def.name, def.key(problem)) !== split) continue;
          const answer = def.solve(problem, difficulty);
          if (answer === null) continue;
          const item: TaskItem = { prompt: def.render(problem), answer };
          return def.meta ? { ...item, meta: def.meta(problem, difficulty) } : item;
        }
        throw new Error(
          `task "${def.name}": no ${split} item in ${MAX_SAMPLE_DRAWS} draws at difficulty ${difficulty}`,
        );
      },
      verify,
      solve(item: TaskItem): string {
        const problem = def.parse(item.prompt);
        if (problem === null) throw new Error(`task "${def.name}": cannot parse prompt ${show(item.prompt)}`);
        const answer = def.solve(problem, difficulty);
        if (answer === null) throw new Error(`task "${def.name}": prompt ${show(item.prompt)} has no solution`);
        return answer;
      },
      splitOf(item: TaskItem): Split | null {
        const problem = typeof item?.prompt === 'string' ? def.parse(item.prompt) : null;
        if (problem === null) return null;
        return def.disjointSplits ? splitOfKey(def.name, def.key(problem)) : 'train';
      },
      teacherId(item: TaskItem): string | null {
        if (!def.teacherId) return null;
        const problem = typeof item?.prompt === 'string' ? def.parse(item.prompt) : null;
        return problem === null ? null : def.teacherId(problem);
      },
    };
  };

  return {
    name: def.name,
    description: def.description,
    difficultyRange: def.difficulty,
    rewardNames,
    alphabet,
    create,
  };
}

/** `n` characters drawn uniformly from `chars`. */
export function randomString(rng: Rng, chars: string, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += chars[rng.int(chars.length)];
  return s;
}

/** A uniform integer in [0, 10^digits) as a decimal string without leading zeros (digit by digit: exact). */
export function randomDecimal(rng: Rng, digits: number): string {
  return randomString(rng, '0123456789', digits).replace(/^0+(?=\d)/, '');
}

/** True for a canonical non-negative decimal integer: digits only, no leading zero (except "0"). */
export function isCanonicalNatural(s: string): boolean {
  return /^(0|[1-9][0-9]*)$/.test(s);
}

/** The format rule of numeric answers, with a reason when it fails. */
export function naturalFormat(s: string): { ok: boolean; why: string } {
  if (!/^[0-9]+$/.test(s)) return { ok: false, why: `not a number: ${show(s)} (digits only)` };
  if (!isCanonicalNatural(s)) return { ok: false, why: `leading zero in ${show(s)}` };
  return { ok: true, why: '' };
}
