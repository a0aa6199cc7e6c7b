// Trying a reward_fn before any run exists: compiling it in its sandbox (an empty batch: the runner loads the
// person's script, which must parse and leave a function, and calls nothing), and scoring one batch of the config's
// task through the same sandbox: a few of the task's items, each with its correct answer and an altered one. What
// the page's editor shows as the person types, and the check before a run is created. Nothing here runs the
// function: only the sandbox does (src/rl/rewards/user-reward.ts).

import { Rng } from '../../core/random';
import { taskOf, type RLConfig } from '../../schema/config';
import { UserRewardError, type SourcePosition, type UserRewardInput, type UserRewardSandbox } from './user-reward';

/** A reward_fn that does not compile (or cannot be tried): the sandbox's message and its place in the source. */
export interface RewardFnProblem {
  message: string;
  at: SourcePosition | null;
}

/** One completion of the trial batch and what the function gave it. */
export interface RewardFnTrialRow {
  prompt: string;
  completion: string;
  /** The task's correct answer, or that answer altered (its last character changed). */
  kind: 'correct' | 'altered';
  reward: number;
  parts: Record<string, number>;
}

/** How many of the task's items the trial batch takes (two completions each). */
export const TRIAL_ITEMS = 4;

const problemOf = (e: unknown): RewardFnProblem =>
  e instanceof UserRewardError
    ? { message: e.message, at: e.at }
    : { message: `reward_fn could not be tried: ${e instanceof Error ? e.message : String(e)}`, at: null };

/** `answer` with its last character changed (a wrong completion of the same length), or "?" for an empty answer. */
export function alteredAnswer(answer: string): string {
  if (!answer) return '?';
  const last = answer[answer.length - 1];
  return answer.slice(0, -1) + (last === '0' ? '1' : last === 'a' ? 'b' : last >= '0' && last <= '9' ? '0' : 'a');
}

/** The trial batch of a config: TRIAL_ITEMS of its task's training items (seeded by its seed), each answered right and wrong. */
export function trialBatch(
  config: RLConfig,
  items = TRIAL_ITEMS,
): (UserRewardInput & { kind: RewardFnTrialRow['kind'] })[] {
  const task = taskOf(config);
  const rng = new Rng(config.seed);
  const out: (UserRewardInput & { kind: RewardFnTrialRow['kind'] })[] = [];
  for (let i = 0; i < items; i++) {
    const item = task.sample(rng, 'train');
    out.push({ prompt: item.prompt, completion: item.answer, item, kind: 'correct' });
    out.push({ prompt: item.prompt, completion: alteredAnswer(item.answer), item, kind: 'altered' });
  }
  return out;
}

/** Compiles `source` in a fresh sandbox: null when it compiles to a function, else the problem. */
export async function checkRewardFn(sandbox: UserRewardSandbox, source: string): Promise<RewardFnProblem | null> {
  const fn = sandbox(source);
  try {
    await fn.score([]);
    return null;
  } catch (e) {
    return problemOf(e);
  } finally {
    fn.destroy();
  }
}

/** Scores the config's trial batch with its reward_fn in a fresh sandbox: each completion's reward, or the problem. */
export async function tryRewardFn(
  sandbox: UserRewardSandbox,
  config: RLConfig,
): Promise<{ rows: RewardFnTrialRow[] } | { problem: RewardFnProblem }> {
  if (config.reward_fn === null)
    return { problem: { message: 'reward_fn is empty: write a function to try', at: null } };
  let batch: ReturnType<typeof trialBatch>;
  try {
    batch = trialBatch(config);
  } catch (e) {
    return { problem: { message: `the task has no items to try reward_fn on: ${(e as Error).message}`, at: null } };
  }
  const fn = sandbox(config.reward_fn);
  try {
    const scores = await fn.score(batch.map(({ prompt, completion, item }) => ({ prompt, completion, item })));
    return {
      rows: batch.map((b, i) => ({
        prompt: b.prompt,
        completion: b.completion,
        kind: b.kind,
        reward: scores[i].reward,
        parts: scores[i].parts,
      })),
    };
  } catch (e) {
    return { problem: problemOf(e) };
  } finally {
    fn.destroy();
  }
}
