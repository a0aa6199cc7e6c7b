// A rollout step's completions: B prompts' groups of G sampled on the policy (dynamic sampling refills the groups
// whose rewards all tie), scored into rewards (the task's verdicts, weighted, plus overlong shaping), and the row
// subset / concatenation that dynamic sampling keeps. Not the advantages (advantages.ts), not the optimizer steps
// (trainer.ts).

import type { Rollout } from '../../model/generate';
import type { Policy } from '../../model/policy';
import { encodePrompt } from '../learners/sft';
import type { Tokenizer } from '../../io/tokenizer';
import type { Rng } from '../../core/random';
import { textTokens, type EndOfSequence } from '../../io/end-of-sequence';
import type { Task, TaskItem, Verdict } from '../../tasks';
import { groupRewardStats } from './advantages';
import { takeRows } from './batch';
import type { DerivedConfig, RLConfig } from '../../schema/config';
import { LEARNED_REWARD_NAME, USER_REWARD_NAME } from '../../schema/algorithm-names';
import type { LearnedReward } from '../rewards/learned-reward';
import type { UserRewardFunction } from '../rewards/user-reward';

/** Rollouts of one step, with rewards, before advantages. */
export interface StepRollouts {
  items: TaskItem[];
  /** (N) BOS-first prompt ids, each group's prompt repeated G times. */
  prompts: number[][];
  rollout: Rollout;
  verdicts: Verdict[];
  texts: string[];
  /** (N) r_i after shaping. */
  rewards: Float32Array;
  /** (N) the overlong penalty added to r_i. */
  overlong: Float32Array;
  /** (N) reward by function name (accuracy, format, overlong). */
  parts: Record<string, Float32Array>;
  /** Groups sampled and groups dropped by dynamic sampling. */
  groupsSampled: number;
  groupsDropped: number;
  /** (B) greedy rewards (remax). */
  greedyRewards?: Float32Array;
  /** Completion tokens of the kept rows. */
  rolloutTokens: number;
  /**
   * Prompt (BOS included) and completion (EOS included) tokens of every completion sampled for the step, the groups
   * dynamic sampling dropped included and remax's greedy baselines not: the step's increment of TRL's num_tokens.
   */
  sampledTokens: number;
}

/** What sampling and scoring read: the run's config, its derived values, the tokenizer and the user's reward function. */
export interface RolloutSetting {
  config: RLConfig;
  derived: DerivedConfig;
  tokenizer: Tokenizer;
  /** The config's reward_fn running in its sandbox (null without one): the reward function `user`. */
  userReward: UserRewardFunction | null;
  /** The config's reward_model, loaded (null without one): the reward function `reward_model`. */
  learnedReward: LearnedReward | null;
}

/**
 * The sampler's options for a generation of rollout step `stepsDone + 1`. One seed per (run seed, step, salt):
 * the same config and seed give the same tokens on the same device.
 */
export function samplerOptions(c: RLConfig, stepsDone: number, seedSalt: number, greedy = false) {
  const seed = (Math.imul(c.seed ^ 0x2545f491, 0x9e3779b1) + Math.imul(stepsDone + 1, 0x85ebca6b) + seedSalt) >>> 0;
  return { temperature: c.temperature, topK: c.top_k, topP: c.top_p, minP: c.min_p, greedy, seed };
}

/**
 * Samples B prompts' groups (prompts drawn from `rng`) and scores them; with dynamic sampling, up to max_resample
 * more batches refill the groups dropped because their rewards all tie. When nothing survives, the last batch is
 * returned as is (its group advantages are all 0).
 */
export async function sampleStepRollouts(
  s: RolloutSetting,
  policy: Policy,
  task: Task,
  rng: Rng,
  stepsDone: number,
): Promise<StepRollouts> {
  const c = s.config;
  const G = c.num_generations;
  const L = s.derived.maxCompletionLength;
  const tok = s.tokenizer;
  const kept: StepRollouts[] = [];
  let sampled = 0;
  let dropped = 0;
  let sampledTokens = 0;
  let keptGroups = 0;
  const attempts = c.dynamic_sampling ? 1 + c.max_resample : 1;
  let last: StepRollouts | null = null;
  for (let a = 0; a < attempts && keptGroups < c.train_batch_size; a++) {
    const B = c.train_batch_size;
    const items = Array.from({ length: B }, () => task.sample(rng, 'train'));
    const prompts = items.flatMap((it) =>
      Array.from({ length: G }, () => encodePrompt(tok, it.prompt, c.chat_template)),
    );
    const rollout = await policy.generate(prompts, {
      maxNewTokens: L,
      sampler: samplerOptions(c, stepsDone, a * 7919),
      eosId: tok.eosId,
      eosIds: tok.eosIds,
      padId: tok.padId,
      recordFiltered: c.rollout_logprobs === 'filtered',
    });
    const r = await scoreCompletions(s, task, items, prompts, rollout);
    if (c.adv_estimator === 'remax') {
      const greedyPrompts = items.map((it) => encodePrompt(tok, it.prompt, c.chat_template));
      const g = await policy.generate(greedyPrompts, {
        maxNewTokens: L,
        sampler: samplerOptions(c, stepsDone, a * 7919 + 1, true),
        eosId: tok.eosId,
        eosIds: tok.eosIds,
        padId: tok.padId,
      });
      r.greedyRewards = (await scoreCompletions(s, task, items, greedyPrompts, g)).rewards;
    }
    sampled += B;
    sampledTokens += r.sampledTokens;
    last = r;
    if (!c.dynamic_sampling) {
      kept.push(r);
      keptGroups += B;
      break;
    }
    const stats = groupRewardStats(r.rewards, G);
    const keep = stats.zeroStd.map((z) => !z);
    dropped += keep.filter((k) => !k).length;
    const room = c.train_batch_size - keptGroups;
    const groups = keep
      .map((k, g) => (k ? g : -1))
      .filter((g) => g >= 0)
      .slice(0, room);
    if (groups.length) {
      kept.push(selectGroups(r, groups, G));
      keptGroups += groups.length;
    }
  }
  const out = kept.length ? mergeRollouts(kept) : last!;
  out.groupsSampled = sampled;
  out.groupsDropped = dropped;
  out.sampledTokens = sampledTokens;
  return out;
}

/**
 * Rewards of a batch of completions: the task's verdicts and the user's reward function (one call for the whole
 * batch, its reward added to each verdict as the part `user` and its own parts as `user.<name>`) and the learned
 * reward model (one batched call, the part `reward_model`), weighted, plus overlong shaping. Rejects with
 * UserRewardError when the user's function fails.
 */
export async function scoreCompletions(
  s: RolloutSetting,
  task: Task,
  items: TaskItem[],
  prompts: number[][],
  rollout: Rollout,
): Promise<StepRollouts> {
  const c = s.config;
  const tok = s.tokenizer;
  const L = s.derived.maxCompletionLength;
  const Lc = s.derived.overlongBufferLen;
  const R = rollout.rows;
  const perItem = R / items.length;
  const weights = s.derived.rewardWeights;
  const rewards = new Float32Array(R);
  const overlong = new Float32Array(R);
  const parts: Record<string, Float32Array> = {};
  const texts: string[] = [];
  const completionIds: number[][] = [];
  let rolloutTokens = 0;
  for (let r = 0; r < R; r++) {
    rolloutTokens += rollout.lengths[r];
    const ids = completionTokens(rollout, r, tok);
    completionIds.push(ids);
    texts.push(tok.decode(ids, { skipSpecialTokens: true }));
  }
  const itemOf = (r: number) => items[Math.floor(r / perItem)];
  // Truncated completions are judged like any other (as TRL does); the task rejects text beyond its longest answer.
  const verdicts: Verdict[] = texts.map((text, r) => task.verify(itemOf(r), text));
  if (s.userReward) {
    const scores = await s.userReward.score(
      texts.map((completion, r) => ({ prompt: itemOf(r).prompt, completion, item: itemOf(r) })),
    );
    verdicts.forEach((v, r) => {
      const u = scores[r];
      v.parts[USER_REWARD_NAME] = u.reward;
      for (const [k, p] of Object.entries(u.parts)) v.parts[`${USER_REWARD_NAME}.${k}`] = p;
      v.reason = `${v.reason}; ${USER_REWARD_NAME} ${u.reward}`;
    });
  }
  if (s.learnedReward) {
    const scores = await s.learnedReward.score(
      texts.map((completion, r) => ({ promptIds: prompts[r], completionIds: completionIds[r], completion })),
    );
    verdicts.forEach((v, r) => {
      v.parts[LEARNED_REWARD_NAME] = scores[r];
      v.reason = `${v.reason}; ${LEARNED_REWARD_NAME} ${scores[r].toPrecision(3)}`;
    });
  }
  for (let r = 0; r < R; r++) {
    const len = rollout.lengths[r];
    const v = verdicts[r];
    let reward = 0;
    for (const [name, w] of Object.entries(weights)) {
      const part = v.parts[name] ?? 0;
      reward += w * part;
      (parts[name] ??= new Float32Array(R))[r] = part;
    }
    if (c.overlong_buffer_enable && Lc > 0 && len > L - Lc) overlong[r] = (L - Lc - len) / Lc;
    rewards[r] = reward + overlong[r];
  }
  if (c.overlong_buffer_enable) parts.overlong = overlong;
  const sampledTokens = prompts.reduce((a, p) => a + p.length, rolloutTokens);
  return {
    items,
    prompts,
    rollout,
    verdicts,
    texts,
    rewards,
    overlong,
    parts,
    groupsSampled: items.length,
    groupsDropped: 0,
    rolloutTokens,
    sampledTokens,
  };
}

/**
 * The token ids of row `r`'s completion up to its first end-of-sequence id of any kind (`eos.eosId` or one of
 * `eos.eosIds`), that id left out: what its text is decoded from and a reward model reads.
 */
export function completionTokens(rollout: Rollout, r: number, eos: EndOfSequence): number[] {
  const L = rollout.maxNewTokens;
  return textTokens(rollout.tokens.subarray(r * L, r * L + rollout.lengths[r]), eos);
}

/** The rows of the groups `groups` (each G consecutive rows). */
function selectGroups(r: StepRollouts, groups: number[], G: number): StepRollouts {
  const rows = groups.flatMap((g) => Array.from({ length: G }, (_, i) => g * G + i));
  return subsetRollouts(r, rows, groups);
}

/** The rollouts of `rows`, whose prompts are the items `groups`. */
function subsetRollouts(r: StepRollouts, rows: number[], groups: number[]): StepRollouts {
  const S = r.rollout.maxNewTokens;
  const ro = r.rollout;
  const pick = <T>(xs: ArrayLike<T>) => rows.map((i) => xs[i]);
  return {
    items: groups.map((g) => r.items[g]),
    prompts: rows.map((i) => r.prompts[i]),
    rollout: {
      rows: rows.length,
      maxNewTokens: S,
      tokens: takeRows(ro.tokens, S, rows),
      logprobs: takeRows(ro.logprobs, S, rows),
      entropies: takeRows(ro.entropies, S, rows),
      mask: takeRows(ro.mask, S, rows),
      lengths: Uint32Array.from(pick(ro.lengths)),
      finished: pick(ro.finished),
      steps: ro.steps,
      readbacks: ro.readbacks,
    },
    verdicts: pick(r.verdicts),
    texts: pick(r.texts),
    rewards: Float32Array.from(pick(r.rewards)),
    overlong: Float32Array.from(pick(r.overlong)),
    parts: Object.fromEntries(Object.entries(r.parts).map(([k, v]) => [k, Float32Array.from(pick(v))])),
    greedyRewards: r.greedyRewards ? Float32Array.from(groups.map((g) => r.greedyRewards![g])) : undefined,
    groupsSampled: r.groupsSampled,
    groupsDropped: r.groupsDropped,
    rolloutTokens: rows.reduce((a, i) => a + ro.lengths[i], 0),
    sampledTokens: r.sampledTokens,
  };
}

/** The concatenation of several batches' rollouts, rows in order (the sampling counters are the caller's to set). */
function mergeRollouts(parts: StepRollouts[]): StepRollouts {
  if (parts.length === 1) return parts[0];
  const cat = <A extends Float32Array | Uint32Array>(xs: A[]): A => {
    const out = new (xs[0].constructor as new (n: number) => A)(xs.reduce((a, x) => a + x.length, 0));
    let o = 0;
    for (const x of xs) {
      out.set(x, o);
      o += x.length;
    }
    return out;
  };
  const ro = parts.map((p) => p.rollout);
  const names = [...new Set(parts.flatMap((p) => Object.keys(p.parts)))];
  return {
    items: parts.flatMap((p) => p.items),
    prompts: parts.flatMap((p) => p.prompts),
    rollout: {
      rows: ro.reduce((a, r) => a + r.rows, 0),
      maxNewTokens: ro[0].maxNewTokens,
      tokens: cat(ro.map((r) => r.tokens)),
      logprobs: cat(ro.map((r) => r.logprobs)),
      entropies: cat(ro.map((r) => r.entropies)),
      mask: cat(ro.map((r) => r.mask)),
      lengths: cat(ro.map((r) => r.lengths)),
      finished: ro.flatMap((r) => r.finished),
      steps: ro.reduce((a, r) => a + r.steps, 0),
      readbacks: ro.reduce((a, r) => a + r.readbacks, 0),
    },
    verdicts: parts.flatMap((p) => p.verdicts),
    texts: parts.flatMap((p) => p.texts),
    rewards: cat(parts.map((p) => p.rewards)),
    overlong: cat(parts.map((p) => p.overlong)),
    parts: Object.fromEntries(
      names.map((n) => [n, cat(parts.map((p) => p.parts[n] ?? new Float32Array(p.rollout.rows)))]),
    ),
    greedyRewards: parts[0].greedyRewards ? cat(parts.map((p) => p.greedyRewards!)) : undefined,
    groupsSampled: 0,
    groupsDropped: 0,
    rolloutTokens: parts.reduce((a, p) => a + p.rolloutTokens, 0),
    sampledTokens: 0,
  };
}
