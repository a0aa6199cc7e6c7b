// The page's side of saved-run A/B, renaming and the reward_fn editor, on a fresh store with a fake engine: a
// finished run opens (not resumes) to compare, on a fresh batch, with "latest" refused until it trains; a rename is
// sent and a refusal is one notice; notices are one per problem (a reward_fn failure replaces the last); the
// editor's check drops a stale answer, and a function known not to compile makes no configure request.
import { describe, expect, it } from 'vitest';
import type { RunHeader, RunProgress } from '../schema/run-types';
import { resolveConfig } from '../schema/config';
import { compareBlocker, createLabStore, IDLE_PROGRESS } from './index';
import { fakeEngine, settle } from './fake-engine.fixture';

function lab() {
  const engine = fakeEngine();
  const store = createLabStore({ connect: engine.connect, storage: null });
  store.getState().startEngine();
  return { store, s: () => store.getState(), ...engine };
}

const config = resolveConfig('grpo', { task: 'copy', difficulty: 3, steps: 4 });
const done: RunHeader = {
  id: 'r1',
  name: 'r1',
  createdAt: 0,
  updatedAt: 0,
  config,
  preset: 'grpo',
  backend: 'webgpu',
  status: 'done',
  step: 4,
  savedStep: 4,
  elapsedMs: 0,
  adapter: '',
  lastMetrics: {},
};
const progress = (status: RunProgress['status'], step: number): RunProgress => ({
  ...IDLE_PROGRESS,
  runId: 'r1',
  name: 'r1',
  status,
  step,
  totalSteps: 4,
});

describe('saved runs on the page', () => {
  it('opens a finished run to compare on a fresh batch, refusing "latest" until it trains', async () => {
    const { s, sent, respond, reply } = lab();
    respond({ type: 'runs', runs: [done], storage: null, persistent: false });
    s().openRunToCompare('r1');
    expect(sent.at(-1)).toEqual({ type: 'open-run', runId: 'r1' });
    expect(sent.some((r) => r.type === 'resume')).toBe(false);
    respond({ type: 'progress', progress: progress('done', 4) });
    reply('open-run', { type: 'done' });
    await settle();
    expect(s().compareSource).toBe('fresh');
    expect(s().compareDraft).not.toBeNull();
    expect(compareBlocker(s())).toBeNull();
    s().setCompareSource('latest');
    expect(compareBlocker(s())).toMatch(/keeps no batch: compare on a fresh batch/);
  });

  it('sends a rename, and a refused one is a notice', async () => {
    const { s, sent, fail } = lab();
    s().renameRun('r1', 'my baseline');
    expect(sent.at(-1)).toEqual({ type: 'rename-run', runId: 'r1', name: 'my baseline' });
    fail('rename-run', 'a run name has at most 80 characters (this one has 81)');
    await settle();
    expect(s().notices.map((n) => n.message)).toEqual([
      'Could not rename the run: a run name has at most 80 characters (this one has 81)',
    ]);
  });
});

describe('notices', () => {
  it('keep one notice per problem: the same text or any reward_fn failure replaces the earlier one', () => {
    const { s } = lab();
    s().addNotice('error', 'Storage is full');
    s().addNotice('error', 'reward_fn does not compile (line 1, column 21: the function ends early): SyntaxError');
    s().addNotice('error', 'Storage is full');
    s().addNotice('error', 'reward_fn threw at line 2 on completion 0: Error: x. The run is paused at step 0');
    expect(s().notices.map((n) => n.message)).toEqual([
      'Storage is full',
      'reward_fn threw at line 2 on completion 0: Error: x. The run is paused at step 0',
    ]);
  });
});

describe('the reward_fn editor', () => {
  it('keeps the check of the text typed last, and makes no run for a function that does not compile', async () => {
    const { s, sent, reply, envelopes, respond } = lab();
    respond({ type: 'ready', report: { description: 'test' } as never });
    s().setField('reward_fn', '(p, c) => c.length +');
    s().checkRewardFn('(p, c) => c.length +');
    const first = envelopes.at(-1)!.id;
    s().checkRewardFn('(p, c) => c.length');
    // The answer to the first text arrives after the second was asked: dropped.
    respond({ type: 'reward-fn-checked', id: first, problem: { message: 'stale', at: null } });
    await settle();
    expect(s().rewardFnCheck).toEqual({ source: '(p, c) => c.length', pending: true, problem: null });
    s().setField('reward_fn', '(p, c) => c.length +');
    s().checkRewardFn('(p, c) => c.length +');
    const problem = { message: 'reward_fn does not compile (line 1, column 21: the function ends early): x', at: null };
    reply('check-reward-fn', { type: 'reward-fn-checked', problem });
    await settle();
    expect(s().rewardFnCheck?.problem).toEqual(problem);
    const before = sent.length;
    s().startRun();
    s().startRun();
    expect(sent.slice(before).filter((r) => r.type === 'configure')).toEqual([]);
    expect(s().notices.map((n) => n.message)).toEqual([problem.message]);
  });

  it('tries the edited config on one batch and keeps the rows', async () => {
    const { s, sent, reply } = lab();
    s().setField('reward_fn', '(p, c) => 1');
    s().tryRewardFn();
    expect(sent.at(-1)).toMatchObject({ type: 'try-reward-fn', config: { reward_fn: '(p, c) => 1' } });
    const rows = [{ prompt: 'copy:ab=', completion: 'ab', kind: 'correct' as const, reward: 1, parts: {} }];
    reply('try-reward-fn', { type: 'reward-fn-tried', rows, problem: null });
    await settle();
    expect(s().rewardFnTrial).toEqual({ source: '(p, c) => 1', pending: false, rows, problem: null });
  });
});
