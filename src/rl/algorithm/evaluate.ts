// Held-out evaluation of the policy: greedy accuracy and mean reward on eval_items held-out prompts, and the
// unbiased pass@k curve (k = 1..eval_num_generations) from sampled completions at the training temperature.
// The same prompts every time (their own RNG, seeded from the run's seed). Not the training rollouts (rollouts.ts).

import type { Policy } from '../../model/policy';
import { encodePrompt } from '../learners/sft';
import { Rng } from '../../core/random';
import type { Task } from '../../tasks';
import { meanPassAtK } from './advantages';
import { completionPasses, solveRateHistogram } from '../observation/dynamics';
import { samplerOptions, scoreCompletions, type RolloutSetting } from './rollouts';
import type { EvalRecord } from '../../schema/stream';

const EVAL_SEED_SALT = 0x5eed_e7a1;

/**
 * Evaluates `policy` on `task`'s held-out split after `stepsDone` rollout steps. A completion counts as correct
 * when it passes (dynamics.ts completionPasses: its accuracy part is 1 and it ended with EOS).
 */
export async function evaluateHeldOut(
  s: RolloutSetting,
  policy: Policy,
  task: Task,
  stepsDone: number,
): Promise<EvalRecord> {
  const c = s.config;
  const tok = s.tokenizer;
  const L = s.derived.maxCompletionLength;
  const rng = new Rng((c.seed ^ EVAL_SEED_SALT) >>> 0);
  const items = Array.from({ length: c.eval_items }, () => task.sample(rng, 'heldout'));
  if (!items.length) return { step: stepsDone, items: 0, accuracy: 0, reward: 0, passAtK: [], solvedBy: [] };
  const n = c.eval_num_generations;
  const chunk = Math.max(1, Math.floor(Math.max(64, c.train_batch_size * c.num_generations) / n));
  let correct = 0;
  let reward = 0;
  const counts: number[] = [];
  for (let i = 0; i < items.length; i += chunk) {
    const part = items.slice(i, i + chunk);
    const prompts = part.map((it) => encodePrompt(tok, it.prompt, c.chat_template));
    const greedy = await policy.generate(prompts, {
      maxNewTokens: L,
      sampler: { ...samplerOptions(c, stepsDone, 0xe7a1, true), seed: 0 },
      eosId: tok.eosId,
      eosIds: tok.eosIds,
      padId: tok.padId,
    });
    const g = await scoreCompletions(s, task, part, prompts, greedy);
    for (let r = 0; r < part.length; r++) {
      correct += completionPasses(g.verdicts[r].parts.accuracy, greedy.finished[r]) ? 1 : 0;
      reward += g.rewards[r];
    }
    const many = prompts.flatMap((p) => Array.from({ length: n }, () => p));
    const samples = await policy.generate(many, {
      maxNewTokens: L,
      sampler: { ...samplerOptions(c, stepsDone, 0xe7a2), seed: (c.seed * 31 + 0xe7a2 + i) >>> 0 },
      eosId: tok.eosId,
      eosIds: tok.eosIds,
      padId: tok.padId,
    });
    const sc = await scoreCompletions(s, task, part, many, samples);
    for (let p = 0; p < part.length; p++) {
      let k = 0;
      for (let j = 0; j < n; j++)
        if (completionPasses(sc.verdicts[p * n + j].parts.accuracy, samples.finished[p * n + j])) k++;
      counts.push(k);
    }
  }
  const passAtK = Array.from({ length: n }, (_, k) => meanPassAtK(counts, n, k + 1));
  return {
    step: stepsDone,
    items: items.length,
    accuracy: correct / items.length,
    reward: reward / items.length,
    passAtK,
    solvedBy: solveRateHistogram(counts, n),
  };
}
