// Hub downloads end to end against the mock hub (two local HTTP servers: the hub and its CDN): resolve and
// redirect, Range resume after a dropped connection, a slow server, gated and missing models, size and hash
// checks, the token kept from the CDN and from the disk, a model refused from its config.json before any weight
// is asked for, and a second run that makes no request. Content: the shipped tiny-qwen2 folder.

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadHfFolder } from '../io/hf-folder';
import { readSafetensors, writeSafetensors } from '../io/safetensors';
import { parseHubId } from '../schema/hub-id';
import { MANIFEST_FILE } from '../hub/cache-layout';
import { startMockHub, type MockHub } from '../testing/mock-hub';
import { TEST_HUB_ENDPOINT } from '../testing/test-hub';
import { CLI_ASSETS, PUBLIC_DIR } from './files';
import { fetchHubModel, hubOptionsFromEnv, hubRepoOf, runHubAssets, type HubOptions } from './hub-cache';

const TINY = new URL('models/tiny-qwen2/', PUBLIC_DIR);
const tinyFiles = (): Record<string, Uint8Array> =>
  Object.fromEntries(readdirSync(TINY).map((f) => [f, new Uint8Array(readFileSync(new URL(f, TINY)))]));
const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const TOKEN = 'hf_test_secret_token_4242';

let hub: MockHub;
let cache: string;
let lines: string[];

const options = (over: Partial<HubOptions> = {}): HubOptions => ({
  endpoint: hub.endpoint,
  token: null,
  cacheDir: cache,
  log: (l) => lines.push(l),
  // Short back-offs between resumes, so the cases that drop every try end quickly.
  transfer: { backoffMs: 20, maxBackoffMs: 50 },
  ...over,
});

/** Every file under `dir`, recursively. */
function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}

beforeEach(async () => {
  const gemma = { ...JSON.parse(new TextDecoder().decode(tinyFiles()['config.json'])), model_type: 'gemma' };
  hub = await startMockHub({
    'org/tiny': { files: tinyFiles(), commit: COMMIT },
    'gated/tiny': { files: tinyFiles(), commit: COMMIT, token: TOKEN },
    'org/gemma': { files: { ...tinyFiles(), 'config.json': JSON.stringify(gemma) } },
  });
  cache = mkdtempSync(join(tmpdir(), 'rl-lab-hub-'));
  lines = [];
});

afterEach(async () => {
  await hub.close();
  rmSync(cache, { recursive: true, force: true });
});

const weightRequests = () => hub.requests.filter((r) => r.path.endsWith('.safetensors'));

describe('hub downloads (mock hub)', () => {
  it('resolves each file, follows the redirect to the CDN for the weights, and the folder loads', async () => {
    const dir = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(dir).toBe(join(cache, 'models--org--tiny', 'snapshots', COMMIT));
    for (const [name, bytes] of Object.entries(tinyFiles()))
      expect(Buffer.compare(readFileSync(join(dir, name)), Buffer.from(bytes)), name).toBe(0);
    expect(readFileSync(join(cache, 'models--org--tiny', 'refs', 'main'), 'utf8')).toBe(COMMIT);
    // config.json first; the weights' bytes come from the CDN's origin, never the hub's.
    expect(hub.requests[0]).toMatchObject({
      server: 'hub',
      method: 'HEAD',
      path: '/org/tiny/resolve/main/config.json',
    });
    expect(hub.requests.slice(1).every((r) => !r.path.includes('/resolve/main/'))).toBe(true); // pinned to the commit
    expect(hub.requests.filter((r) => r.server === 'cdn').map((r) => [r.method, r.path])).toEqual([
      ['GET', `/org/tiny/${COMMIT}/model.safetensors`],
    ]);
    expect(lines.some((l) => /downloading 1 file, .* from http:\/\/127\.0\.0\.1:\d+/.test(l))).toBe(true);
    const folder = await loadHfFolder({
      bytes: async (n) => new Uint8Array(readFileSync(join(dir, n))),
      text: async (n) => readFileSync(join(dir, n), 'utf8'),
    });
    expect(folder.ck.config.dModel).toBe(24);
    expect(walk(cache).filter((f) => f.endsWith('.incomplete'))).toEqual([]);
  });

  it('a second run reads the cache and makes no request', async () => {
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    const before = hub.requests.length;
    expect(before).toBeGreaterThan(0);
    const dir = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(hub.requests.length).toBe(before);
    expect(lines.at(-1)).toContain('read from the cache');
    // The run's asset loader maps the id's paths to the snapshot, with no request either.
    const assets = await runHubAssets({ checkpoint: 'org/tiny', reward_model: null }, CLI_ASSETS, options());
    expect(await assets.text('org/tiny/config.json')).toBe(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(hub.requests.length).toBe(before);
  });

  it('resumes with Range after a connection dropped mid-file', async () => {
    hub.faults.drop = { file: 'model.safetensors', afterBytes: 5000, count: 1 };
    const dir = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(
      Buffer.compare(readFileSync(join(dir, 'model.safetensors')), Buffer.from(tinyFiles()['model.safetensors'])),
    ).toBe(0);
    const cdn = hub.requests.filter((r) => r.server === 'cdn');
    expect(cdn.map((r) => r.range)).toEqual([null, 'bytes=5000-']);
  });

  it('starts the file again when the server ignores the Range (200 to a resumed request)', async () => {
    hub.faults.drop = { file: 'model.safetensors', afterBytes: 5000, count: 1 };
    hub.faults.ignoreRange = true;
    const dir = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(hub.requests.filter((r) => r.server === 'cdn').map((r) => r.range)).toEqual([null, 'bytes=5000-']);
    expect(
      Buffer.compare(readFileSync(join(dir, 'model.safetensors')), Buffer.from(tinyFiles()['model.safetensors'])),
    ).toBe(0);
  });

  it('keeps the partial file when every try drops, and the next run resumes from it', async () => {
    hub.faults.drop = { file: 'model.safetensors', afterBytes: 3000, count: 99 };
    const repo = parseHubId('org/tiny');
    await expect(fetchHubModel(repo, 'checkpoint', options())).rejects.toThrow(
      /model\.safetensors of org\/tiny at revision 0123.*stopped at 12000 of \d+ bytes after 4 tries.*run again to resume/,
    );
    const partial = join(cache, 'models--org--tiny', 'snapshots', COMMIT, 'model.safetensors.incomplete');
    expect(statSync(partial).size).toBe(12000);
    expect(existsSync(join(cache, 'models--org--tiny', 'refs', 'main'))).toBe(false);
    hub.faults.drop = undefined;
    hub.requests.length = 0;
    const dir = await fetchHubModel(repo, 'checkpoint', options());
    expect(hub.requests.filter((r) => r.server === 'cdn').map((r) => r.range)).toEqual(['bytes=12000-']);
    // The small files finished in the first run are not fetched again.
    expect(hub.requests.filter((r) => r.method === 'GET' && r.server === 'hub')).toEqual([]);
    expect(
      Buffer.compare(readFileSync(join(dir, 'model.safetensors')), Buffer.from(tinyFiles()['model.safetensors'])),
    ).toBe(0);
    expect(existsSync(partial)).toBe(false);
  });

  it('waits out a slow server, reporting progress chunk by chunk', async () => {
    hub.faults.slow = { chunkBytes: 16 * 1024, pauseMs: 2 };
    const seen: number[] = [];
    const dir = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', {
      ...options(),
      progress: (file, bytes) => file === 'model.safetensors' && seen.push(bytes),
    });
    const size = tinyFiles()['model.safetensors'].length;
    expect(seen.length).toBeGreaterThanOrEqual(Math.ceil(size / (16 * 1024)));
    expect(seen.at(-1)).toBe(size);
    expect(statSync(join(dir, 'model.safetensors')).size).toBe(size);
  });

  it('a gated model: 401 asks for HF_TOKEN, a wrong token is named refused, the right one downloads', async () => {
    const repo = parseHubId('gated/tiny');
    await expect(fetchHubModel(repo, 'checkpoint', options())).rejects.toThrow(
      'this model is gated or private: set HF_TOKEN (gated/tiny answered 401 GatedRepo for config.json)',
    );
    await expect(fetchHubModel(repo, 'checkpoint', options({ token: 'hf_wrong' }))).rejects.toThrow(
      /gated\/tiny refused HF_TOKEN \(403 GatedRepo\) for config\.json/,
    );
    hub.requests.length = 0;
    await fetchHubModel(repo, 'checkpoint', options({ token: TOKEN }));
    const hubReqs = hub.requests.filter((r) => r.server === 'hub');
    const cdnReqs = hub.requests.filter((r) => r.server === 'cdn');
    expect(hubReqs.length).toBeGreaterThan(0);
    expect(hubReqs.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
    // Not forwarded to the redirect's origin.
    expect(cdnReqs.length).toBe(1);
    expect(cdnReqs[0].authorization).toBeNull();
    // Never written to the cache, nor to what the person is told.
    for (const f of walk(cache)) expect(readFileSync(f).includes(TOKEN), f).toBe(false);
    expect(lines.join('\n')).not.toContain(TOKEN);
  });

  it("follows a renamed repo's relative redirect on the hub's origin with the token, and the CDN's without it", async () => {
    hub.renamed.set('old/tiny', 'gated/tiny');
    const dir = await fetchHubModel(parseHubId('old/tiny'), 'checkpoint', options({ token: TOKEN }));
    expect(dir).toBe(join(cache, 'models--old--tiny', 'snapshots', COMMIT));
    const onHub = hub.requests.filter((r) => r.server === 'hub');
    const oldPaths = onHub.filter((r) => r.path.startsWith('/old/tiny/'));
    const newPaths = onHub.filter((r) => r.path.startsWith('/gated/tiny/'));
    expect(oldPaths.length).toBeGreaterThan(0);
    expect(newPaths.length).toBeGreaterThan(0);
    expect([...oldPaths, ...newPaths].every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(hub.requests.filter((r) => r.server === 'cdn').map((r) => r.authorization)).toEqual([null]);
  });

  it("follows no redirect but the endpoint's: a CDN that redirects elsewhere is refused before that host is asked", async () => {
    const third = await startMockHub({});
    try {
      hub.faults.cdnRedirectTo = `${third.endpoint}/elsewhere`;
      await expect(fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options())).rejects.toThrow(
        `${hub.cdnOrigin} redirected to ${third.endpoint}; only the endpoint's redirects are followed`,
      );
      expect(third.requests).toEqual([]);
    } finally {
      await third.close();
    }
  });

  it('a missing file names the file and revision; a missing model and revision are named too', async () => {
    delete hub.repos.get('org/tiny')!.files['model.safetensors'];
    await expect(fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options())).rejects.toThrow(
      `model.safetensors of org/tiny at revision ${COMMIT} does not exist (404 EntryNotFound)`,
    );
    await expect(fetchHubModel(parseHubId('org/nothing'), 'checkpoint', options())).rejects.toThrow(
      'no model org/nothing on the hub (404 RepoNotFound)',
    );
    await expect(fetchHubModel(parseHubId('org/tiny@v9'), 'checkpoint', options())).rejects.toThrow(
      'org/tiny has no revision v9 (404)',
    );
  });

  it('an absent optional file (generation_config.json) is fine and the snapshot is complete without it', async () => {
    delete hub.repos.get('org/tiny')!.files['generation_config.json'];
    const dir = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(existsSync(join(dir, 'generation_config.json'))).toBe(false);
    const n = hub.requests.length;
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(hub.requests.length).toBe(n);
  });

  it('refuses a file of the wrong size or hash, removing the bad download', async () => {
    const size = tinyFiles()['model.safetensors'].length;
    hub.faults.wrongSize = { file: 'model.safetensors', size: size - 10 };
    const partial = join(cache, 'models--org--tiny', 'snapshots', COMMIT, 'model.safetensors.incomplete');
    await expect(fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options())).rejects.toThrow(
      `${new URL(hub.cdnOrigin).host} sent more than the ${size - 10} bytes the hub announced (the transfer was stopped at the first byte past them); removed the download`,
    );
    expect(existsSync(partial)).toBe(false);
    hub.faults.wrongSize = undefined;
    hub.faults.wrongSha256 = { file: 'model.safetensors', sha256: 'f'.repeat(64) };
    await expect(fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options())).rejects.toThrow(
      /model\.safetensors of org\/tiny .*: SHA-256 [0-9a-f]{64} differs from the hub's f{64}; removed the download/,
    );
    expect(existsSync(partial)).toBe(false);
    expect(existsSync(join(cache, 'models--org--tiny', 'snapshots', COMMIT, 'model.safetensors'))).toBe(false);
  });

  it('names a weight file announced as 0 bytes with a hash, and asks for no byte of it', async () => {
    hub.faults.wrongSize = { file: 'model.safetensors', size: 0 };
    const t0 = performance.now();
    const error = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options()).catch((e: Error) => e);
    console.log(`0-byte announcement: refused after ${((performance.now() - t0) / 1000).toFixed(2)} s`);
    expect(String(error)).toMatch(
      /model\.safetensors of org\/tiny at revision [0-9a-f]{40}: the hub announced it as 0 bytes with SHA-256 [0-9a-f]{64}, which is not the hash of an empty file \(e3b0c442[0-9a-f]{56}\); nothing was downloaded/,
    );
    expect(hub.requests.filter((r) => r.server === 'cdn')).toEqual([]);
  });

  it('a wrong file planted in the snapshot without a completion marker is named and fetched again', async () => {
    const weights = tinyFiles()['model.safetensors'];
    const dir = join(cache, 'models--org--tiny', 'snapshots', COMMIT);
    mkdirSync(dir, { recursive: true });
    const planted = weights.slice();
    planted[100] ^= 0xff;
    writeFileSync(join(dir, 'model.safetensors'), planted);
    const t0 = performance.now();
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    console.log(`planted file without marker: refetched after ${((performance.now() - t0) / 1000).toFixed(2)} s`);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^checkpoint org\/tiny: model\.safetensors of org\/tiny in the cache does not match the hub \(SHA-256 [0-9a-f]{64}, the hub announces [0-9a-f]{64}\): fetching it again$/,
      ),
    );
    expect(Buffer.compare(readFileSync(join(dir, 'model.safetensors')), Buffer.from(weights))).toBe(0);
    expect(weightRequests().filter((r) => r.server === 'cdn' && r.method === 'GET')).toHaveLength(1);
    // A planted file of another size is named by its size.
    rmSync(join(cache, 'models--org--tiny', 'refs'), { recursive: true });
    writeFileSync(join(dir, 'model.safetensors'), weights.subarray(0, 10));
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(lines).toContainEqual(expect.stringContaining(`(10 bytes, the hub announces ${weights.length})`));
    expect(Buffer.compare(readFileSync(join(dir, 'model.safetensors')), Buffer.from(weights))).toBe(0);
  });

  it('a wrong file planted in a complete snapshot (its marker kept) is named and fetched again', async () => {
    const weights = tinyFiles()['model.safetensors'];
    const dir = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    const planted = weights.slice();
    planted[100] ^= 0xff;
    writeFileSync(join(dir, 'model.safetensors'), planted);
    hub.requests.length = 0;
    const t0 = performance.now();
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    console.log(`planted file with marker: refetched after ${((performance.now() - t0) / 1000).toFixed(2)} s`);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^checkpoint org\/tiny: model\.safetensors of org\/tiny in the cache does not match its record \(SHA-256 [0-9a-f]{64}, recorded [0-9a-f]{64}\): fetching it again$/,
      ),
    );
    expect(Buffer.compare(readFileSync(join(dir, 'model.safetensors')), Buffer.from(weights))).toBe(0);
    expect(weightRequests().filter((r) => r.server === 'cdn' && r.method === 'GET')).toHaveLength(1);
    // The snapshot holds again: the next run reads it with no request.
    hub.requests.length = 0;
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(hub.requests).toEqual([]);
  });

  /** The manifest of the complete snapshot, read and rewritten as one who can write the cache would. */
  const forgeManifest = (
    dir: string,
    edit: (files: { name: string; size: number; sha256?: string }[]) => unknown[],
  ) => {
    const path = join(dir, MANIFEST_FILE);
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as {
      files: { name: string; size: number; sha256?: string }[];
    };
    writeFileSync(path, `${JSON.stringify({ ...manifest, files: edit(manifest.files) }, null, 2)}\n`);
  };

  it("a manifest whose recorded SHA-256 is not the file's is not trusted: named, the file fetched again", async () => {
    const weights = tinyFiles()['model.safetensors'];
    const dir = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    forgeManifest(dir, (files) =>
      files.map((f) => (f.name === 'model.safetensors' ? { ...f, sha256: 'f'.repeat(64) } : f)),
    );
    hub.requests.length = 0;
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^checkpoint org\/tiny: model\.safetensors of org\/tiny in the cache does not match its record \(SHA-256 [0-9a-f]{64}, recorded f{64}\): fetching it again$/,
      ),
    );
    expect(weightRequests().filter((r) => r.server === 'cdn' && r.method === 'GET')).toHaveLength(1);
    expect(Buffer.compare(readFileSync(join(dir, 'model.safetensors')), Buffer.from(weights))).toBe(0);
    // The manifest is written anew with the hub's hash, and holds with no request after.
    hub.requests.length = 0;
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(hub.requests).toEqual([]);
  });

  it("a manifest whose size is not the file's is not trusted: the file is checked against the hub's HEAD", async () => {
    const weights = tinyFiles()['model.safetensors'];
    const dir = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    // A wrong file of another size, and the manifest's size forged to match it (its recorded hash kept).
    writeFileSync(join(dir, 'model.safetensors'), weights.subarray(0, 64));
    forgeManifest(dir, (files) => files.map((f) => (f.name === 'model.safetensors' ? { ...f, size: 64 } : f)));
    hub.requests.length = 0;
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(lines).toContainEqual(expect.stringContaining('model.safetensors of org/tiny in the cache does not match'));
    expect(weightRequests().filter((r) => r.server === 'cdn' && r.method === 'GET')).toHaveLength(1);
    expect(Buffer.compare(readFileSync(join(dir, 'model.safetensors')), Buffer.from(weights))).toBe(0);
    // Only the size forged (the file intact): its hash against the hub's, kept with no weight fetched.
    forgeManifest(dir, (files) => files.map((f) => (f.name === 'model.safetensors' ? { ...f, size: 1 } : f)));
    hub.requests.length = 0;
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(weightRequests().filter((r) => r.method === 'GET')).toEqual([]);
    expect(weightRequests().filter((r) => r.method === 'HEAD').length).toBeGreaterThan(0);
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as {
      files: { name: string; size: number }[];
    };
    expect(manifest.files.find((f) => f.name === 'model.safetensors')?.size).toBe(weights.length);
  });

  it('a manifest that leaves a file of the snapshot out is not trusted: the file left out is checked and fetched again', async () => {
    const weights = tinyFiles()['model.safetensors'];
    const dir = await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    const planted = weights.slice();
    planted[100] ^= 0xff;
    writeFileSync(join(dir, 'model.safetensors'), planted);
    forgeManifest(dir, (files) => files.filter((f) => f.name !== 'model.safetensors'));
    hub.requests.length = 0;
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(lines).toContainEqual(
      expect.stringContaining('model.safetensors of org/tiny in the cache does not match the hub'),
    );
    expect(Buffer.compare(readFileSync(join(dir, 'model.safetensors')), Buffer.from(weights))).toBe(0);
    // The same for a small file the reader takes when present (tokenizer.json), left out and replaced.
    const tokenizer = tinyFiles()['tokenizer.json'];
    writeFileSync(join(dir, 'tokenizer.json'), '{"forged": true}');
    forgeManifest(dir, (files) => files.filter((f) => f.name !== 'tokenizer.json'));
    await fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options());
    expect(Buffer.compare(readFileSync(join(dir, 'tokenizer.json')), Buffer.from(tokenizer))).toBe(0);
  });

  it('refuses a model the engine cannot run from its config.json, before any weight is asked for', async () => {
    await expect(fetchHubModel(parseHubId('org/gemma'), 'checkpoint', options())).rejects.toThrow(/Gemma|gemma/);
    expect(weightRequests()).toEqual([]);
    expect(hub.requests.filter((r) => r.server === 'cdn')).toEqual([]);
  });

  it('tells the memory plan the model before the weights, and a refusal there fetches no weight', async () => {
    const seen: number[] = [];
    await expect(
      fetchHubModel(parseHubId('org/tiny'), 'checkpoint', {
        ...options(),
        plan: (m) => {
          seen.push(m.dModel);
          throw new Error('the run does not fit this device');
        },
      }),
    ).rejects.toThrow('does not fit');
    expect(seen).toEqual([24]);
    expect(weightRequests()).toEqual([]);
  });

  it('names the host it cannot reach', async () => {
    const endpoint = hub.endpoint;
    await hub.close();
    await expect(fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options({ endpoint }))).rejects.toThrow(
      `cannot reach ${new URL(endpoint).host} (ECONNREFUSED)`,
    );
    hub = await startMockHub({});
  });

  it('a sharded checkpoint: the index among the small files, then a HEAD of each shard for the size, then the shards', async () => {
    const files = tinyFiles();
    const whole = readSafetensors(files['model.safetensors'], { copy: true });
    const names = [...whole.tensors.keys()];
    const shardOf = (i: number) => `model-0000${i < names.length / 2 ? 1 : 2}-of-00002.safetensors`;
    const weightMap = Object.fromEntries(names.map((n, i) => [n, shardOf(i)]));
    const shards = Object.fromEntries(
      ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'].map((part) => [
        part,
        writeSafetensors(
          new Map(
            names
              .filter((n) => weightMap[n] === part)
              .map((n) => {
                const t = whole.tensors.get(n)!;
                return [n, { dtype: 'F32' as const, shape: [...t.shape], data: t.data as Float32Array }];
              }),
          ),
          { format: 'pt' },
        ),
      ]),
    );
    const { 'model.safetensors': _single, ...rest } = files;
    hub.repos.set('org/sharded', {
      files: {
        ...rest,
        ...shards,
        'model.safetensors.index.json': JSON.stringify({ metadata: {}, weight_map: weightMap }),
      },
    });
    const dir = await fetchHubModel(parseHubId('org/sharded'), 'checkpoint', options());
    const total = Object.values(shards).reduce((s, b) => s + b.length, 0);
    expect(lines.find((l) => l.includes('downloading'))).toContain('downloading 2 files');
    expect(lines.find((l) => l.includes('downloading'))).toContain(`${(total / 1024).toFixed(1)} KiB`);
    // Both shards' sizes are known (HEAD) before the first shard's bytes are asked for.
    const firstCdn = hub.requests.findIndex((r) => r.server === 'cdn');
    const heads = hub.requests.filter((r, i) => i < firstCdn && r.method === 'HEAD' && r.path.includes('-of-00002'));
    expect(heads.length).toBe(2);
    const folder = await loadHfFolder({
      bytes: async (n) => new Uint8Array(readFileSync(join(dir, n))),
      text: async (n) => readFileSync(join(dir, n), 'utf8'),
    });
    expect(folder.weightFiles).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
  });

  it('a reward model: config.json, then the files its kind needs', async () => {
    const rm = new URL('models/copy-reward-model/', PUBLIC_DIR);
    hub.repos.set('org/rm', {
      files: Object.fromEntries(readdirSync(rm).map((f) => [f, new Uint8Array(readFileSync(new URL(f, rm)))])),
    });
    const dir = await fetchHubModel(parseHubId('org/rm'), 'reward_model', options());
    expect(readdirSync(dir).sort()).toEqual([
      '.rl-lab-download.json',
      '.rl-lab-snapshot.json',
      'config.json',
      'model.safetensors',
    ]);
    // What was fetched, from where, with each size the hub gave: the record a cut download is listed by.
    const size = (f: string) => statSync(join(dir, f)).size;
    expect(JSON.parse(readFileSync(join(dir, '.rl-lab-download.json'), 'utf8'))).toEqual({
      repo: 'org/rm',
      revision: 'main',
      commit: 'c'.repeat(40),
      origin: hub.endpoint,
      files: ['config.json', 'model.safetensors'].map((name) => ({ name, size: size(name) })),
    });
    // The snapshot is named by the commit the hub's X-Repo-Commit gave (the mock's default).
    expect(dir).toBe(join(cache, 'models--org--rm', 'snapshots', 'c'.repeat(40)));
  });
});

describe('which values are hub ids', () => {
  it('a local folder of that name wins; a bad id is refused naming the field', () => {
    expect(hubRepoOf('checkpoint', 'src/cli')).toBeNull();
    expect(hubRepoOf('checkpoint', '/abs/org/name')).toBeNull();
    expect(hubRepoOf('checkpoint', 'copy')).toBeNull();
    expect(hubRepoOf('reward_model', 'models/copy-reward-model')).toBeNull(); // a site path under public/
    expect(hubRepoOf('checkpoint', 'org/name@v1')).toMatchObject({ id: 'org/name', revision: 'v1' });
    expect(() => hubRepoOf('reward_model', 'org/na..me')).toThrow('reward_model: hub id');
  });

  it('reads HF_ENDPOINT, HF_TOKEN and RL_LAB_CACHE_DIR, the flag before the variable, the Hugging Face Hub by default', () => {
    const env = { HF_ENDPOINT: 'http://a', HF_TOKEN: 't', RL_LAB_CACHE_DIR: '/c' };
    expect(hubOptionsFromEnv(null, env)).toEqual({ endpoint: 'http://a', token: 't', cacheDir: '/c' });
    expect(hubOptionsFromEnv('http://b', env).endpoint).toBe('http://b');
    expect(hubOptionsFromEnv(null, { XDG_CACHE_HOME: '/x' })).toEqual({
      endpoint: 'https://huggingface.co',
      token: null,
      cacheDir: '/x/rl-lab',
    });
  });

  it('reads RL_LAB_HUB_TIMEOUT as both timeouts in seconds, and refuses anything else naming it', () => {
    expect(hubOptionsFromEnv(null, { RL_LAB_HUB_TIMEOUT: '2.5' }).transfer).toEqual({
      headersTimeoutMs: 2500,
      idleTimeoutMs: 2500,
    });
    expect(hubOptionsFromEnv(null, { RL_LAB_HUB_TIMEOUT: '' }).transfer).toBeUndefined();
    for (const bad of ['0', '-1', 'abc', '1e3', '99999', '$(touch x)'])
      expect(() => hubOptionsFromEnv(null, { RL_LAB_HUB_TIMEOUT: bad }), bad).toThrow(
        `RL_LAB_HUB_TIMEOUT: ${JSON.stringify(bad)} is not a number of seconds between 0 and 3600`,
      );
  });

  it('in tests, an id without an endpoint goes to a closed port on this machine and fails at once naming it', async () => {
    expect(process.env.HF_ENDPOINT).toBe(TEST_HUB_ENDPOINT);
    const opts = { ...hubOptionsFromEnv(null), cacheDir: cache, log: (l: string) => lines.push(l) };
    await expect(fetchHubModel(parseHubId('org/tiny'), 'checkpoint', opts)).rejects.toThrow(
      /^cannot reach 127\.0\.0\.1:2 \(ECONNREFUSED\)/,
    );
    // And were HF_ENDPOINT dropped, the default hub is refused by the tests' fetch, named, before any connection.
    const dropped = { ...opts, endpoint: hubOptionsFromEnv(null, {}).endpoint };
    await expect(fetchHubModel(parseHubId('org/tiny'), 'checkpoint', dropped)).rejects.toThrow(
      'cannot reach huggingface.co (tests reach only this machine, not huggingface.co)',
    );
  });
});

describe('npm run train with a hub id', () => {
  it('refuses a model the engine cannot run before any weight is asked for and before the run folder exists', async () => {
    const out = join(cache, 'run');
    const { trainRl } = await import('./train-rl');
    const env = { ...process.env };
    process.env.RL_LAB_CACHE_DIR = join(cache, 'hub');
    try {
      await expect(
        trainRl(['--checkpoint', 'org/gemma', '--hf_endpoint', hub.endpoint, '--task', 'addition', '--out', out]),
      ).rejects.toThrow(/Gemma/);
      // No --hf_endpoint: HF_ENDPOINT, which the tests point at a closed port, named in the refusal.
      await expect(trainRl(['--checkpoint', 'org/name', '--task', 'addition', '--out', out])).rejects.toThrow(
        /cannot reach 127\.0\.0\.1:2/,
      );
    } finally {
      process.env = env;
    }
    expect(weightRequests()).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });
});
