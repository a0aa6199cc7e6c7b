// The R1-style answer format around any task: the completion is `<think>...</think><answer>...</answer>`, the
// tags are scored as the reward function `format` and the inner task's verifier, applied to what the answer tag
// holds, as `accuracy` (two reward functions, as R1-style recipes have them). The inner task's own format part
// is kept as `inner_format`, its informational parts as they are. Not a task of its own in the registry: the
// config's answer_format puts it around the chosen task.

import { rejection, show, type Task, type TaskFactory, type TaskItem, type Verdict } from './task';

/** Characters the thinking may take beyond the tags and the answer (the small presets' context is short). */
export const THINK_BUDGET = 16;

const OPEN_THINK = '<think>';
const CLOSE_THINK = '</think>';
const OPEN_ANSWER = '<answer>';
const CLOSE_ANSWER = '</answer>';
const TAGS = OPEN_THINK + CLOSE_THINK + OPEN_ANSWER + CLOSE_ANSWER;
/** The whole completion in the format, thinking and answer free of tag characters. */
const WELL_FORMED = /^<think>([^<>]*)<\/think><answer>([^<>]*)<\/answer>$/;
/** The first answer tag anywhere (the answer is judged even when the rest of the format is off, as in R1). */
const ANSWER = /<answer>([^<>]*)<\/answer>/;

/** The reward weights of the wrapped task: the answer's correctness first, the format a fifth. */
const WEIGHTS = { accuracy: 0.8, format: 0.2 } as const;

/**
 * Every printable ASCII character: the thinking is free text, and the answer tag's content meets the inner
 * task's own alphabet rule when its verifier judges it.
 */
const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

/** `inner` with its answers written as `<think>...</think><answer>...</answer>`. */
export function thinkFormatTask(inner: Task): Task {
  const alphabet = PRINTABLE;
  const allowed = new Set(alphabet);
  const limit = inner.maxCompletionLength + TAGS.length + THINK_BUDGET;
  const extra = inner.rewardNames.filter((n) => n !== 'accuracy' && n !== 'format');
  const verify = (item: TaskItem, completion: string): Verdict => {
    if (typeof completion !== 'string') return rejection('completion is not a string');
    if (inner.splitOf(item) === null)
      return rejection(`prompt ${show(String(item?.prompt))} is not a ${inner.name} prompt`);
    if (completion.length === 0) return rejection('empty completion');
    if (completion.length > limit) return rejection(`overlong: ${completion.length} characters, limit ${limit}`);
    for (const ch of completion) if (!allowed.has(ch)) return rejection(`character ${show(ch)} is not printable ASCII`);
    const format = WELL_FORMED.test(completion) ? 1 : 0;
    const answer = ANSWER.exec(completion)?.[1];
    const judged = answer === undefined ? null : inner.verify(item, answer);
    const accuracy = judged?.parts.accuracy ?? 0;
    const parts = { ...judged?.parts, inner_format: judged?.parts.format ?? 0, accuracy, format };
    const reason = `${format ? 'format ok' : 'not <think>...</think><answer>...</answer>'}; ${judged ? `answer: ${judged.reason}` : 'no <answer>...</answer>'}`;
    return { reward: Math.min(1, Math.max(0, WEIGHTS.accuracy * accuracy + WEIGHTS.format * format)), parts, reason };
  };
  return {
    name: inner.name,
    description: `${inner.description} Answered as <think>...</think><answer>...</answer>.`,
    difficulty: inner.difficulty,
    difficultyRange: inner.difficultyRange,
    alphabet,
    weights: WEIGHTS,
    rewardNames: ['accuracy', 'format', ...extra, 'inner_format'],
    maxPromptLength: inner.maxPromptLength,
    maxCompletionLength: limit,
    disjointSplits: inner.disjointSplits,
    sample: (rng, split) => {
      const item = inner.sample(rng, split);
      return { ...item, answer: `${OPEN_THINK}${CLOSE_THINK}${OPEN_ANSWER}${item.answer}${CLOSE_ANSWER}` };
    },
    verify,
    solve: (item) => `${OPEN_THINK}${CLOSE_THINK}${OPEN_ANSWER}${inner.solve(item)}${CLOSE_ANSWER}`,
    splitOf: (item) => inner.splitOf(item),
    teacherId: (item) => inner.teacherId(item),
  };
}

/** A factory whose tasks are `factory`'s in the think/answer format. */
export function thinkFormat(factory: TaskFactory): TaskFactory {
  const sample = thinkFormatTask(factory.create());
  return {
    name: factory.name,
    description: sample.description,
    difficultyRange: factory.difficultyRange,
    alphabet: sample.alphabet,
    rewardNames: sample.rewardNames,
    create: (difficulty) => thinkFormatTask(factory.create(difficulty)),
  };
}
