// A reward model trained in the lab, then optimized by RL: the pairs come only from mixed groups of the warm start's
// own completions, the trained model ranks held-out pairs better than chance, its saved folder loads back through
// the engine's loader with the same scores, and a GRPO run rewarded by it alone logs the proxy (rewards/reward_model)
// beside the verifier it was distilled from (rewards/accuracy, weight 0): over-optimization in one chart.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../../cli/files';
import { loadLearnedReward } from '../../engine/learned-reward';
import type { GpuContext } from '../../gpu';
import { acquireNodeDevice } from '../../gpu/node';
import { resolveConfig } from '../../schema/config';
import { labReward } from './learned-reward';
import {
  REWARD_MODEL_TRAINING_DEFAULTS,
  rankingAccuracy,
  rewardModelFiles,
  trainLabRewardModel,
} from './reward-model-train';
import { Trainer } from '../algorithm/trainer';
import { runToEnd } from '../../testing/run-to-end';

let ctx: GpuContext;
const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

describe('a reward model trained in the lab, then RL against it', () => {
  it('learns the verifier from the policy, loads back from its folder, and is over-optimized by GRPO', async () => {
    const sampling = resolveConfig('grpo', {
      task: 'copy',
      difficulty: 3,
      temperature: 1,
      num_generations: 8,
      train_batch_size: 8,
      seed: 3,
    });
    const sampler = await Trainer.create({
      config: sampling,
      init: { config: warm.ck.config, params: warm.ck.params },
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx },
    });
    const opts = { ...REWARD_MODEL_TRAINING_DEFAULTS, pairs: 160, heldOutPairs: 48, steps: 50 };
    const result = await trainLabRewardModel(
      sampler,
      sampler.learner.policy,
      { ctx, config: warm.ck.config, params: warm.ck.params },
      opts,
    );
    sampler.destroy();
    const c = result.collected;
    console.log(
      `reward model: ${c.pairs.length} pairs from ${c.batches} batches (${c.mixedGroups}/${c.groups} groups mixed); ` +
        `held-out ranking ${result.heldOutAccuracyBefore.toFixed(3)} -> ${result.heldOutAccuracyAfter.toFixed(3)}; ` +
        `bt_loss ${result.history[0].loss.toFixed(3)} -> ${result.history.at(-1)!.loss.toFixed(3)}`,
    );
    expect(c.pairs.length).toBe(opts.pairs + opts.heldOutPairs);
    for (const p of c.pairs) expect(p.chosen).not.toEqual(p.rejected);
    expect(result.heldOutAccuracyBefore).toBe(0); // a zero head ties every pair: nothing is ranked right yet
    expect(result.heldOutAccuracyAfter).toBeGreaterThan(0.6);

    // The saved folder, read back through the engine's loader, scores as the trained model does.
    const files = await rewardModelFiles(
      result,
      { bosId: warm.tok.bosId, eosId: warm.tok.eosId, padId: warm.tok.padId },
      { task: 'copy' },
    );
    const folder = new Map<string, Uint8Array | string>([
      ['rm/config.json', files.configJson],
      ['rm/model.safetensors', files.safetensors],
    ]);
    const assets = {
      bytes: async (p: string) => folder.get(p) as Uint8Array,
      text: async (p: string) => {
        const f = folder.get(p);
        if (typeof f !== 'string') throw new Error(`no file ${p}`);
        return f;
      },
    };
    const rl = resolveConfig('grpo', {
      task: 'copy',
      difficulty: 3,
      temperature: 0.7,
      learning_rate: 1e-3,
      train_batch_size: 4,
      num_generations: 8,
      steps: 12,
      eval_every: 0,
      seed: 0,
      reward_model: 'rm',
      reward_weights: { reward_model: 1, accuracy: 0 },
    });
    const loaded = await loadLearnedReward(rl, assets, {
      policy: warm.ck.config,
      padId: warm.tok.padId,
      backend: { kind: 'webgpu', ctx },
    });
    expect(loaded.source).toMatch(/trained in the lab, rm\//);
    const probe = result.collected.pairs
      .slice(0, 8)
      .map((p) => ({ promptIds: p.prompt, completionIds: p.chosen, completion: '' }));
    const direct = await labReward(result.rm, 'direct').score(probe);
    const viaFolder = await loaded.score(probe);
    probe.forEach((_, i) => expect(viaFolder[i]).toBeCloseTo(direct[i], 5));
    expect(await rankingAccuracy(result.rm, result.collected.pairs.slice(-opts.heldOutPairs))).toBe(
      result.heldOutAccuracyAfter,
    );
    result.rm.destroy();

    const records = await runToEnd({
      config: rl,
      init: { config: warm.ck.config, params: warm.ck.params },
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx },
      learnedReward: loaded,
    });
    const series = (name: string) => records.map((r) => (r.metrics as Record<string, number>)[name]);
    const proxy = series('rewards/reward_model/mean');
    const verifier = series('rewards/accuracy/mean');
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(
      `GRPO on the reward model, 12 steps: proxy ${proxy.map((x) => x.toFixed(2)).join(' ')}; verifier accuracy ${verifier.map((x) => x.toFixed(2)).join(' ')}`,
    );
    expect(proxy.every(Number.isFinite)).toBe(true);
    expect(verifier.every((x) => x >= 0 && x <= 1)).toBe(true);
    // The reward the policy was trained on is the proxy alone: it climbs.
    expect(mean(proxy.slice(-4))).toBeGreaterThan(mean(proxy.slice(0, 4)));
    for (const r of records)
      expect((r.metrics as Record<string, number>).reward).toBeCloseTo(
        (r.metrics as Record<string, number>)['rewards/reward_model/mean'],
        5,
      );
  });
});
