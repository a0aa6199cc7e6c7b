// The objective A/B on the page's side, on a fresh store with a fake engine: B starts as a preset applied to the
// current run's config (keeping its task and batch sizes), edits are checked per field, Compare is blocked with a
// reason until a paused run and a valid B exist, the request carries B's config, the answer lands with its
// explanation and the labels naming B's edits, a stale answer is ignored, and a refusal is shown. Also the
// tokens' colours and values as the panel draws them.
import { describe, expect, it } from 'vitest';
import type { RunHeader, RunProgress } from '../schema/run-types';
import { compareObjectives, type ObjectiveComparison } from '../rl/observation/compare';
import { randomComparedBatch } from '../rl/observation/compare.fixture';
import { resolveConfig, type RLConfig } from '../schema/config';
import type { Response } from '../worker/protocol';
import { comparedColor, comparedScale, comparedTokens, highlightedTokens } from './compare';
import { MASKED_COLOR } from './explain';
import {
  COMPARE_FIELDS,
  compareBlocker,
  compareDependency,
  compareDependencyOf,
  createLabStore,
  IDLE_PROGRESS,
} from './index';
import { fakeEngine, settle } from './fake-engine.fixture';

function lab() {
  const engine = fakeEngine();
  const store = createLabStore({ connect: engine.connect, storage: null });
  store.getState().startEngine();
  return { store, ...engine };
}

const A = resolveConfig('grpo', { task: 'copy', difficulty: 3, train_batch_size: 2, num_generations: 4, seed: 7 });
const header = (status: RunHeader['status']): RunHeader => ({
  id: 'r1',
  name: 'r1',
  createdAt: 0,
  updatedAt: 0,
  config: A,
  preset: 'grpo',
  backend: 'webgpu',
  status,
  step: 2,
  savedStep: 2,
  elapsedMs: 0,
  adapter: '',
  lastMetrics: {},
});
const progress = (status: RunProgress['status'], step = 2): RunProgress => ({
  ...IDLE_PROGRESS,
  runId: 'r1',
  name: 'r1',
  status,
  step,
  totalSteps: 10,
});

async function answer(id: number, a: RLConfig, b: RLConfig): Promise<Response> {
  const batch = randomComparedBatch(3, 8, 4, 9, 0.3);
  const sides = await compareObjectives({ kind: 'cpu' }, batch, a, b);
  const rows = Array.from(batch.lengths, (length, r) => ({
    group: Math.floor(r / 4),
    prompt: `p${Math.floor(r / 4)}`,
    text: 't',
    tokens: new Uint32Array(length),
    length,
    reward: batch.rewards[r],
    correct: batch.correct[r] === 1,
    finished: true,
  }));
  const comparison: ObjectiveComparison = {
    source: 'latest',
    step: 2,
    S: batch.S,
    groupSize: 4,
    ratioIsOne: false,
    rows,
    ...sides,
  };
  return {
    type: 'objective-comparison',
    id,
    runId: 'r1',
    comparison,
    texts: rows.map((r) => Array.from({ length: r.length }, (_, t) => `x${t}`)),
  };
}

describe('compare slice', () => {
  it('builds B from the run, checks it, sends it, and keeps the answer with its explanation', async () => {
    const { store, sent, respond, idOf } = lab();
    const s = () => store.getState();
    expect(compareBlocker(s())).toMatch(/start a run/);
    respond({ type: 'runs', runs: [header('paused')], storage: null, persistent: false });
    respond({ type: 'progress', progress: progress('running') });
    s().pickCompareObjective('dr_grpo');
    expect(compareBlocker(s())).toMatch(/the run is running: pause it/);
    respond({ type: 'progress', progress: progress('paused') });
    expect(compareBlocker(s())).toBeNull();
    // The preset's knobs, the run's experiment.
    expect(s().compareDraft).toMatchObject({
      adv_estimator: 'dr_grpo',
      loss_agg_mode: 'seq-mean-token-sum-norm',
      beta: 0,
      task: 'copy',
      num_generations: 4,
      seed: 7,
    });
    s().setCompareField('epsilon_high', -1);
    expect(s().compareCheck?.fieldErrors.epsilon_high).toBeTruthy();
    expect(compareBlocker(s())).toMatch(/B's knobs have an error/);
    s().setCompareField('epsilon_high', 0.28);
    s().setCompareSource('fresh');
    s().runComparison();
    const req = sent.at(-1);
    expect(req).toMatchObject({
      type: 'compare-objectives',
      source: 'fresh',
      config: { adv_estimator: 'dr_grpo', epsilon_high: 0.28 },
    });
    expect(compareBlocker(s())).toBe('comparing…');
    const id = idOf('compare-objectives');
    respond(await answer(id + 1, A, s().compareCheck!.config!)); // not the request in flight: ignored
    await settle();
    expect(s().comparison).toBeNull();
    respond(await answer(id, A, s().compareCheck!.config!));
    await settle();
    const view = s().comparison!;
    expect(view.labelA).toBe('A: GRPO (DeepSeekMath) (this run)');
    expect(view.labelB).toBe('B: Dr. GRPO with epsilon_high 0.28');
    expect(view.explanation.lines.join('\n')).toContain('1/(N·L_max)');
    expect(s().comparePending).toBeNull();
  });

  it("shows the worker's refusal", async () => {
    const { store, respond, fail } = lab();
    respond({ type: 'runs', runs: [header('paused')], storage: null, persistent: false });
    respond({ type: 'progress', progress: progress('paused') });
    store.getState().pickCompareObjective('dapo');
    store.getState().runComparison();
    fail('compare-objectives', 'objective B: the batch is gone');
    await settle();
    expect(store.getState().compareError).toBe('objective B: the batch is gone');
    expect(store.getState().comparePending).toBeNull();
    expect(store.getState().notices).toEqual([]);
    // The message is about the B it was given: a change to B clears it.
    store.getState().setCompareField('epsilon_high', 0.3);
    expect(store.getState().compareError).toBeNull();
  });

  it('Dr. GRPO vs GRPO: B invalid only by beta (no reference policy in A) offers the fix; Compare waits until then', () => {
    const { store, sent, respond } = lab();
    const s = () => store.getState();
    const dr = resolveConfig('dr_grpo', { task: 'copy', difficulty: 3, train_batch_size: 2, num_generations: 4 });
    respond({
      type: 'runs',
      runs: [{ ...header('paused'), config: dr, preset: 'dr_grpo' }],
      storage: null,
      persistent: false,
    });
    respond({ type: 'progress', progress: progress('paused') });
    s().pickCompareObjective('grpo');
    expect(s().compareCheck?.config).not.toBeNull(); // B is a valid config on its own
    expect(compareDependencyOf(s())).toEqual({
      field: 'beta',
      reason:
        "B's beta 0.04 adds a KL term, which needs a reference policy's log-probs; run A kept none (its beta is 0)",
      fix: { beta: 0 },
    });
    expect(compareBlocker(s())).toMatch(/needs a reference policy's log-probs.*\(fix below\)$/);
    const before = sent.length;
    s().runComparison();
    expect(sent.length).toBe(before); // blocked: nothing sent
    s().fixCompareDependency();
    expect(s().compareDraft?.beta).toBe(0);
    expect(compareDependencyOf(s())).toBeNull();
    expect(compareBlocker(s())).toBeNull();
    s().runComparison();
    expect(sent.at(-1)).toMatchObject({ type: 'compare-objectives', config: { adv_estimator: 'grpo', beta: 0 } });
  });

  it('names the other dependent knobs: the group size, a critic, greedy rollouts', () => {
    const grpo = resolveConfig('grpo');
    expect(compareDependency(grpo, { ...grpo, num_generations: grpo.num_generations * 2 })?.fix).toEqual({
      num_generations: grpo.num_generations,
    });
    expect(compareDependency(grpo, { ...grpo, adv_estimator: 'gae' })?.reason).toMatch(/needs a critic/);
    expect(compareDependency(grpo, { ...grpo, adv_estimator: 'remax' })?.fix).toEqual({ adv_estimator: 'grpo' });
    expect(compareDependency(grpo, grpo)).toBeNull();
  });
});

describe("B's knobs", () => {
  it("are the objective's: advantages, policy loss, KL and entropy terms, the loss mask; not the schedule or the reference reset", () => {
    for (const f of [
      'adv_estimator',
      'scale_rewards',
      'epsilon_high',
      'loss_agg_mode',
      'beta',
      'kl_estimator',
      'entropy_coef',
      'mask_truncated_completions',
    ] as const)
      expect(COMPARE_FIELDS).toContain(f);
    for (const f of ['ref_model_sync_steps', 'entropy_target', 'learning_rate', 'num_iterations', 'task'] as const)
      expect(COMPARE_FIELDS).not.toContain(f);
  });
});

describe('compared tokens as drawn', () => {
  it("reads each side's values, colours masked tokens grey and scales both sides alike", async () => {
    const r = await answer(
      1,
      resolveConfig('grpo', { num_generations: 4 }),
      resolveConfig('dr_grpo', { num_generations: 4 }),
    );
    const { comparison: c, texts } = r as Extract<Response, { type: 'objective-comparison' }>;
    const row = c.rows.findIndex((x) => x.length > 2);
    const a = comparedTokens(c, c.a, row, texts[row]);
    expect(a.map((t) => t.text)).toEqual(texts[row]);
    a.forEach((t) => {
      const i = row * c.S + t.position;
      expect(t.share).toBe(c.a.lossShare[i]);
      expect(t.dLogp).toBe(c.a.dLogp[i]);
      expect(t.masked).toBe(c.a.mask[i] === 0);
      if (t.masked) expect(comparedColor(t, 'share', 1)).toBe(MASKED_COLOR);
    });
    const shareScale = comparedScale(c, 'share');
    expect(shareScale).toBe(Math.max(...c.a.lossShare, ...c.b.lossShare));
    expect(comparedScale(c, 'clip')).toBe(1);
    const { explainComparison } = await import('../schema/compare-explain');
    const marked = highlightedTokens(explainComparison(c));
    expect(marked.size).toBe(8);
  });
});
