// The hub slice without a DOM, on a store with a fake engine: a link naming a hub id fills the model field and sends
// nothing; Check and the confirmed download send the typed id with the endpoint; progress lands by model and the
// status line shows the download apart from the run's phase; the token goes to the worker and is kept nowhere in
// the store, the link or its storage; a bad endpoint or id is named before anything is sent.
import { describe, expect, it } from 'vitest';
import { configToUrlParams, resolveConfig } from '../schema/config';
import type { HubProgress } from '../hub/manager-types';
import { createLabStore, DEFAULT_HF_ENDPOINT } from './index';
import { fakeEngine, settle } from './fake-engine.fixture';
import { downloadText } from './status-line';

function lab(storage: Map<string, string> = new Map()) {
  const engine = fakeEngine();
  const store = createLabStore({
    connect: engine.connect,
    storage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v) },
  });
  store.getState().startEngine();
  return { store, storage, ...engine };
}

const progress = (p: Partial<HubProgress>): HubProgress => ({
  model: 'org/model',
  state: 'downloading',
  files: [],
  current: null,
  bytes: 0,
  total: null,
  rate: 0,
  etaSeconds: null,
  message: null,
  ...p,
});

describe('hub models in the store', () => {
  it('fills the model field from a link with a hub id and sends nothing to the hub', () => {
    const l = lab();
    l.store
      .getState()
      .initConfig('?preset=grpo&checkpoint=HuggingFaceTB%2FSmolLM2-135M-Instruct', 'https://lab.example/');
    expect(l.store.getState().draft.checkpoint).toBe('HuggingFaceTB/SmolLM2-135M-Instruct');
    expect(l.store.getState().linkCheckpoint).toBeNull();
    expect(l.sent.filter((r) => r.type.startsWith('hub-'))).toEqual([]);
  });

  it('checks and downloads the id as typed, from the endpoint set', async () => {
    const l = lab();
    expect(l.store.getState().hubEndpoint).toBe(DEFAULT_HF_ENDPOINT);
    l.store.getState().setHubEndpoint('http://127.0.0.1:4311');
    expect(l.storage.get('rl-lab.hf_endpoint')).toBe('http://127.0.0.1:4311');
    const checking = l.store.getState().checkHubModel('org/model@v1');
    expect(l.store.getState().hubCheck?.status).toBe('checking');
    const sent = l.sent.find((r) => r.type === 'hub-check');
    expect(sent).toMatchObject({ model: 'org/model@v1', endpoint: 'http://127.0.0.1:4311' });
    l.fail('hub-check', 'org/model is gated or private (401): paste a hub token');
    await checking;
    expect(l.store.getState().hubCheck).toMatchObject({ status: 'failed', message: /paste a hub token/ });
    void l.store.getState().downloadHubModel('org/model@v1');
    expect(l.sent.find((r) => r.type === 'hub-download')).toEqual({
      type: 'hub-download',
      model: 'org/model@v1',
      endpoint: 'http://127.0.0.1:4311',
    });
  });

  it('names a bad id or endpoint before sending anything', async () => {
    const l = lab();
    await l.store.getState().checkHubModel('org/../x');
    expect(l.store.getState().hubCheck).toMatchObject({ status: 'failed', message: /hub id/ });
    l.store.getState().setHubEndpoint('ftp://hub.example');
    // A bad endpoint is not kept for the next visit.
    expect(l.storage.get('rl-lab.hf_endpoint')).toBeUndefined();
    expect(l.sent.filter((r) => r.type === 'hub-check')).toEqual([]);
  });

  it('hands the token to the worker and keeps it nowhere in the store, the link or storage', () => {
    const l = lab();
    l.store.getState().setField('checkpoint', 'org/gated');
    l.store.getState().setHubToken('  hf_secret_token  ');
    expect(l.sent.find((r) => r.type === 'hub-token')).toEqual({ type: 'hub-token', token: 'hf_secret_token' });
    expect(l.store.getState().hubTokenSet).toBe(true);
    const state = JSON.stringify(l.store.getState(), (_, v) => (typeof v === 'function' ? undefined : v));
    expect(state).not.toContain('hf_secret');
    // The link the page shares is made of the checked config and the preset, as ShareLink makes it.
    const { check, preset } = l.store.getState();
    const link = configToUrlParams(check.config ?? resolveConfig(preset), preset).toString();
    expect(link).toContain('checkpoint=org%2Fgated');
    expect(link).not.toContain('hf_secret');
    expect([...l.storage.values()].join()).not.toContain('hf_secret');
    l.store.getState().setHubToken('');
    expect(l.sent.findLast((r) => r.type === 'hub-token')).toEqual({ type: 'hub-token', token: null });
    expect(l.store.getState().hubTokenSet).toBe(false);
  });

  it('keeps progress by model and shows the download apart in the status line', async () => {
    const l = lab();
    l.respond({
      type: 'hub-progress',
      progress: progress({ bytes: 3 * 2 ** 20, total: 8 * 2 ** 20, rate: 2 ** 20, etaSeconds: 5 }),
    });
    await settle();
    const downloads = l.store.getState().hubDownloads;
    expect(downloads['org/model'].bytes).toBe(3 * 2 ** 20);
    expect(downloadText(downloads)).toBe('downloading org/model: 3 MiB of 8 MiB · 1 MiB/s · 0:05 left');
    expect(downloadText({ a: progress({ state: 'paused' }) })).toBeNull();
  });
});
