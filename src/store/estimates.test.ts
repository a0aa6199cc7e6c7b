// The page's side of the step estimates, on a fresh store with a fake engine: a topic's configs are asked once,
// asked again when they change, an answer for configs no longer asked is dropped, and a failed request is shown as
// its reason and asked again next time.
import { describe, expect, it } from 'vitest';
import type { ModelEstimate } from '../engine/model-estimates';
import { resolveConfig } from '../schema/config';
import { createLabStore } from './index';
import { fakeEngine, settle } from './fake-engine.fixture';

function lab() {
  const engine = fakeEngine();
  const store = createLabStore({ connect: engine.connect, storage: null });
  store.getState().startEngine();
  return { store, s: () => store.getState(), ...engine };
}

const estimate = (seconds: number): ModelEstimate => ({
  model: 'nano',
  parameters: 55_680,
  peakBytes: 1e6,
  weightDtype: 'f32',
  memoryProblems: [],
  range: [seconds * 0.55, seconds * 1.95],
  seconds,
  phases: [{ phase: 'gen', seconds }],
  configFrom: 'the nano preset',
  generation: null,
});

describe('step estimates', () => {
  it('asks once per set of configs, and keeps only the answer for the configs asked last', async () => {
    const { s, sent, envelopes, respond, reply } = lab();
    const a = resolveConfig('grpo');
    const b = resolveConfig('grpo', { train_batch_size: 16 });
    s().requestEstimates('draft', [a]);
    s().requestEstimates('draft', [a]);
    expect(sent.filter((r) => r.type === 'estimate')).toHaveLength(1);
    s().requestEstimates('draft', [b]);
    // The answer for a arrives after b was asked, and is not shown.
    const first = envelopes.find((e) => e.type === 'estimate')!.id;
    respond({ type: 'estimates', estimates: [estimate(1)], throughput: 'assumed', id: first });
    await settle();
    expect(s().estimates.draft).toMatchObject({ pending: true, key: JSON.stringify([b]) });
    reply('estimate', { type: 'estimates', estimates: [estimate(2)], throughput: 'measured' });
    await settle();
    expect(s().estimates.draft).toMatchObject({ pending: false, throughput: 'measured', error: null });
    expect(s().estimates.draft?.estimates[0]).toMatchObject({ seconds: 2 });
  });

  it('shows why a request failed, and asks again for the same configs', async () => {
    const { s, sent, fail } = lab();
    const a = resolveConfig('grpo');
    s().requestEstimates('experiment', [a]);
    fail('estimate', 'the engine is gone');
    await settle();
    expect(s().estimates.experiment).toMatchObject({ pending: false, error: 'the engine is gone', estimates: [] });
    s().requestEstimates('experiment', [a]);
    expect(sent.filter((r) => r.type === 'estimate')).toHaveLength(2);
    expect(s().estimates.draft).toBeUndefined();
  });
});
