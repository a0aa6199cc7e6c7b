// The engine worker's hub download manager against the mock hub (src/testing/mock-hub.ts: a hub and its CDN on
// 127.0.0.1) with an in-memory store: the check fetches small files only; progress, rate and time left follow an
// injected clock; a cut download resumes with Range; cancel keeps what was fetched; the token reaches the endpoint's
// origin only; a 401 and an unreachable host say what to do; a run reads a kept model and refuses one not kept.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PartialFile } from '../hub/download';
import type { HubRepo } from '../schema/hub-id';
import type { HubProgress, KeptModel } from '../hub/manager-types';
import type { SnapshotManifest } from '../hub/snapshot';
import { resolveConfig } from '../schema/config';
import { startMockHub, type MockHub } from '../testing/mock-hub';
import { etaSeconds, followingFetch, HubManager, RateMeter, type KeptStore } from './hub-manager';

const FOLDER = 'public/models/tiny-qwen2';
const files = Object.fromEntries(
  readdirSync(FOLDER).map((f) => [f, new Uint8Array(readFileSync(join(FOLDER, f)))] as const),
);
const WEIGHTS = files['model.safetensors'].length;

/** A KeptStore in memory: committed files, partial files, refs and manifests by model. */
function memoryStore(): KeptStore & { files: Map<string, Uint8Array> } {
  const stored = new Map<string, Uint8Array>();
  const refs = new Map<string, SnapshotManifest>();
  const key = (repo: HubRepo, commit: string, file: string) => `${repo.id}/${commit}/${file}`;
  const concat = (a: Uint8Array, b: Uint8Array) => {
    const out = new Uint8Array(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
  };
  return {
    files: stored,
    async complete(repo) {
      const m = refs.get(`${repo.id}@${repo.revision}`);
      return m?.files.every((f) => stored.get(key(repo, m.commit, f.name))?.length === f.size) ? m : null;
    },
    partial(repo, commit, file): PartialFile {
      const k = `${key(repo, commit, file)}.incomplete`;
      const bytes = () => stored.get(k) ?? new Uint8Array(0);
      return {
        size: async () => bytes().length,
        append: async (chunk) => void stored.set(k, concat(bytes(), chunk)),
        truncate: async () => void stored.set(k, new Uint8Array(0)),
        sha256: async () => {
          const { createHash } = await import('node:crypto');
          return createHash('sha256').update(bytes()).digest('hex');
        },
        commit: async () => {
          stored.set(key(repo, commit, file), bytes());
          stored.delete(k);
        },
        discard: async () => void stored.delete(k),
      };
    },
    async read(repo, commit, file) {
      const b = stored.get(key(repo, commit, file));
      if (!b) throw new Error(`${file} not kept`);
      return b;
    },
    committedSize: async (repo, commit, file) => stored.get(key(repo, commit, file))?.length ?? null,
    committedSha256: async (repo, commit, file) => {
      const { createHash } = await import('node:crypto');
      return createHash('sha256')
        .update(stored.get(key(repo, commit, file)) ?? new Uint8Array(0))
        .digest('hex');
    },
    removeCommitted: async (repo, commit, file) => void stored.delete(key(repo, commit, file)),
    finish: async (repo, manifest) => void refs.set(`${repo.id}@${repo.revision}`, manifest),
    async list() {
      const kept: KeptModel[] = [];
      for (const [ref, m] of refs) {
        const [repoId, revision] = ref.split('@');
        kept.push({
          model: revision === 'main' ? repoId : ref,
          repoId,
          revision,
          commit: m.commit,
          origin: '',
          bytes: m.files.reduce((s, f) => s + f.size, 0),
          total: m.files.reduce((s, f) => s + f.size, 0),
          complete: true,
        });
      }
      return kept;
    },
    async remove(repoId, revision) {
      refs.delete(`${repoId}@${revision}`);
      for (const k of [...stored.keys()]) if (k.startsWith(`${repoId}/`)) stored.delete(k);
    },
  };
}

const config = resolveConfig('grpo', { task: 'copy' });

describe('rate and time left', () => {
  it('measures bytes per second over the last window of an injected clock', () => {
    const m = new RateMeter(5000);
    expect(m.rate()).toBe(0);
    m.add(0, 0);
    m.add(1000, 1000);
    expect(m.rate()).toBe(1000);
    // A faster stretch: the window drops samples older than 5 s, so the rate follows the last seconds.
    m.add(6000, 6000);
    m.add(11000, 56_000);
    expect(m.rate()).toBe(10_000);
    expect(etaSeconds(20_000, m.rate())).toBe(2);
    expect(etaSeconds(null, 100)).toBeNull();
    expect(etaSeconds(100, 0)).toBeNull();
  });
});

describe('HubManager against the mock hub', () => {
  let hub: MockHub;
  let clock: number;
  let events: HubProgress[];
  let store: ReturnType<typeof memoryStore>;
  const manager = (f: typeof fetch = fetch) =>
    new HubManager({
      store: async () => store,
      fetch: f,
      now: () => clock,
      emit: (p) => events.push(p),
      emitEveryMs: 0,
      // Timeouts of a second and short back-offs: each hostile case ends in seconds.
      transfer: { headersTimeoutMs: 1000, idleTimeoutMs: 1000, resumes: 2, backoffMs: 20, maxBackoffMs: 50 },
    });

  beforeEach(async () => {
    hub = await startMockHub({ 'org/tiny': { files }, 'org/gated': { files, token: 'hf_secret' } });
    clock = 0;
    events = [];
    store = memoryStore();
  });
  afterEach(() => hub.close());

  it('checks from the small files only: architecture, memory plan, download size, chat template', async () => {
    const check = await manager().check('org/tiny', hub.endpoint, config);
    expect(check.refused).toBeNull();
    expect(check.architecture).toMatch(/^Qwen2ForCausalLM: \d+ layers, hidden \d+/);
    expect(check.downloadBytes).toBe(WEIGHTS);
    expect(check.sizesKnown).toBe(true);
    expect(check.chatTemplate).toBe(true);
    // generation_config.json's sampling defaults, under the file's names (tiny-qwen2 states do_sample only).
    expect(check.generation).toEqual({ do_sample: false });
    expect(check.memory?.totalBytes).toBeGreaterThan(0);
    expect(check.origin).toBe(hub.endpoint);
    const weights = check.files.find((f) => f.name === 'model.safetensors');
    expect(weights).toEqual({ name: 'model.safetensors', size: WEIGHTS, kept: 0 });
    // The weights were only HEADed: no GET reached the CDN or the weights' resolve URL.
    expect(hub.requests.filter((r) => r.server === 'cdn')).toEqual([]);
    expect(hub.requests.some((r) => r.method === 'GET' && r.path.endsWith('model.safetensors'))).toBe(false);
  });

  it('refuses an architecture from config.json before fetching anything else', async () => {
    hub.repos.set('org/bert', { files: { 'config.json': '{"architectures":["BertModel"],"model_type":"bert"}' } });
    const check = await manager().check('org/bert', hub.endpoint, config);
    expect(check.refused).toMatch(/bert|Bert/);
    expect(check.memory).toBeNull();
    expect(hub.requests.map((r) => r.path).every((p) => p.endsWith('config.json'))).toBe(true);
  });

  it('downloads with progress, rate and time left per file, then a run reads the kept model', async () => {
    hub.faults.slow = { chunkBytes: 8192, pauseMs: 1 };
    const m = manager();
    const real = events.push.bind(events);
    // The injected clock moves 100 ms per event, so the rate is bytes over that clock, whatever the real speed.
    events.push = (...p) => {
      clock += 100;
      return real(...p);
    };
    await m.download('org/tiny', hub.endpoint);
    const last = events.at(-1) as HubProgress;
    expect(last.state).toBe('done');
    expect(last.bytes).toBe(last.total);
    const mid = events.find((e) => e.state === 'downloading' && e.bytes > 30_000 && e.current === 'model.safetensors');
    expect(mid?.rate).toBeGreaterThan(0);
    expect(mid?.etaSeconds).toBeCloseTo(((mid?.total ?? 0) - (mid?.bytes ?? 0)) / (mid?.rate ?? 1), 5);
    expect(mid?.files.find((f) => f.name === 'model.safetensors')?.size).toBe(WEIGHTS);
    const assets = m.assets({ bytes: async () => new Uint8Array(), text: async () => 'site' });
    expect(JSON.parse(await assets.text('org/tiny/config.json')).model_type).toBe('qwen2');
    expect((await assets.bytes('org/tiny/model.safetensors')).length).toBe(WEIGHTS);
    // A shipped path is never read as a hub id.
    expect(await assets.text('models/tiny-qwen2/config.json')).toBe('site');
    expect((await m.list()).map((k) => k.model)).toEqual(['org/tiny']);
    await m.remove('org/tiny');
    await expect(assets.text('org/tiny/config.json')).rejects.toThrow(/org\/tiny is not kept in this browser/);
  });

  it('resumes a cut download with Range, from the bytes kept', async () => {
    hub.faults.drop = { file: 'model.safetensors', afterBytes: 10_000, count: 4 };
    const m = manager();
    await expect(m.download('org/tiny', hub.endpoint)).rejects.toThrow(/partial file is kept/);
    expect(events.at(-1)?.state).toBe('failed');
    const check = await m.check('org/tiny', hub.endpoint, config);
    const kept = check.files.find((f) => f.name === 'model.safetensors')?.kept ?? 0;
    expect(kept).toBeGreaterThanOrEqual(10_000);
    expect(check.downloadBytes).toBe(WEIGHTS - kept);
    hub.requests.length = 0;
    await m.download('org/tiny', hub.endpoint);
    expect(hub.requests.find((r) => r.server === 'cdn' && r.method === 'GET')?.range).toBe(`bytes=${kept}-`);
    expect(events.at(-1)?.state).toBe('done');
  });

  it('shows a stalled transfer, then each resume (retrying n of N), then fails naming the host and the file', async () => {
    hub.faults.stall = { file: 'model.safetensors', afterBytes: 1000 };
    await expect(manager().download('org/tiny', hub.endpoint)).rejects.toThrow(
      `after 3 tries (no data from ${new URL(hub.cdnOrigin).host} for 1 s while downloading model.safetensors)`,
    );
    const states = events.map((e) => e.state);
    expect(states).toContain('stalled');
    const retries = events.filter((e) => e.state === 'retrying');
    expect(retries.map((e) => e.retry)).toEqual([
      { retry: 1, retries: 2 },
      { retry: 2, retries: 2 },
    ]);
    expect(retries[0].message).toMatch(
      /^no data from 127\.0\.0\.1:\d+ for 1 s while downloading model\.safetensors; resuming model\.safetensors from byte 1000 in 0\.02 s \(retry 1 of 2\)$/,
    );
    expect(events.at(-1)).toMatchObject({ state: 'failed', current: null });
  });

  it('stops an endless body at the announced size and fails naming it', async () => {
    hub.faults.endless = { file: 'model.safetensors' };
    await expect(manager().download('org/tiny', hub.endpoint)).rejects.toThrow(
      `sent more than the ${WEIGHTS} bytes the hub announced`,
    );
    expect(store.files.has(`org/tiny/${'c'.repeat(40)}/model.safetensors.incomplete`)).toBe(false);
    expect(events.at(-1)?.state).toBe('failed');
  });

  it('pauses on cancel, keeping what was fetched, and resumes', async () => {
    hub.faults.slow = { chunkBytes: 4096, pauseMs: 5 };
    const m = manager();
    const real = events.push.bind(events);
    events.push = (...p) => {
      if (p[0].bytes > 20_000 && p[0].state === 'downloading') m.cancel('org/tiny');
      return real(...p);
    };
    await expect(m.download('org/tiny', hub.endpoint)).rejects.toThrow(/paused/);
    const paused = events.at(-1) as HubProgress;
    expect(paused.state).toBe('paused');
    expect(paused.message).toMatch(/Resume continues/);
    expect(paused.bytes).toBeLessThan(paused.total ?? 0);
    events.push = real;
    hub.faults.slow = undefined;
    await m.download('org/tiny', hub.endpoint);
    expect(events.at(-1)?.state).toBe('done');
  });

  it('sends the token to the endpoint only, never to the CDN, and says what to do on a 401', async () => {
    const m = manager();
    await expect(m.check('org/gated', hub.endpoint, config)).rejects.toThrow(
      /gated or private \(401\): paste a hub token .* memory only/,
    );
    m.setToken('hf_wrong');
    await expect(m.download('org/gated', hub.endpoint)).rejects.toThrow(
      /refused the token \(403\).*accept the model's terms/,
    );
    m.setToken('hf_secret');
    hub.requests.length = 0;
    await m.download('org/gated', hub.endpoint);
    const hubAuth = hub.requests.filter((r) => r.server === 'hub').map((r) => r.authorization);
    const cdnAuth = hub.requests.filter((r) => r.server === 'cdn').map((r) => r.authorization);
    expect(hubAuth.length).toBeGreaterThan(0);
    expect(hubAuth.every((a) => a === 'Bearer hf_secret')).toBe(true);
    expect(cdnAuth.length).toBeGreaterThan(0);
    expect(cdnAuth.every((a) => a === null)).toBe(true);
    // The token appears in no progress message.
    expect(JSON.stringify(events)).not.toContain('hf_secret');
  });

  it('works as a browser fetches: redirects followed by fetch, sizes and hashes from the CDN, no token there', async () => {
    const m = manager(followingFetch(fetch));
    m.setToken('hf_secret');
    const check = await m.check('org/gated', hub.endpoint, config);
    expect(check.downloadBytes).toBe(WEIGHTS);
    expect(check.commit).toBe('c'.repeat(40));
    await m.download('org/gated', hub.endpoint);
    expect(events.at(-1)?.state).toBe('done');
    const cdn = hub.requests.filter((r) => r.server === 'cdn');
    expect(cdn.length).toBeGreaterThan(0);
    expect(cdn.every((r) => r.authorization === null)).toBe(true);
  });

  it("refuses a hub or download host outside the page's connect sources, naming it", async () => {
    // Sources of a page that allows the hub but not its CDN: the weights' HEAD is refused after the redirect.
    await expect(
      manager(followingFetch(fetch, [hub.endpoint])).check('org/tiny', hub.endpoint, config),
    ).rejects.toThrow(`${hub.cdnOrigin} (where the hub redirected) is not a hub origin this page may connect to`);
    const strict = new HubManager({
      store: async () => store,
      fetch,
      now: () => clock,
      emit: () => {},
      sources: ['https://huggingface.co'],
    });
    hub.requests.length = 0;
    await expect(strict.check('org/tiny', hub.endpoint, config)).rejects.toThrow(
      `${hub.endpoint} is not a hub origin this page may connect to`,
    );
    expect(hub.requests).toEqual([]);
  });

  it('names the host and the kept models when the hub cannot be reached', async () => {
    const m = manager();
    await m.download('org/tiny', hub.endpoint);
    const endpoint = hub.endpoint;
    await hub.close();
    await expect(m.check('org/other', endpoint, config)).rejects.toThrow(
      new RegExp(`cannot reach ${new URL(endpoint).host}.*Kept in this browser: org/tiny\\.`),
    );
    hub = await startMockHub({});
  });
});
