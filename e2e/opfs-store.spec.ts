// The page's hub store (src/io/opfs-snapshot-store.ts) in real Chromium, whose Origin Private File System Node
// lacks: a download cut by a reload keeps what was written and is listed as partial, then resumes after the kept
// bytes, hashes to the file's SHA-256 (the kept prefix read back), commits, lists as complete under two revisions,
// and is removed revision by revision until its storage is freed. Run in a dedicated worker (sync access handles,
// as the engine has) and on the main thread (writable streams; copy and remove where move is missing).
// Needs nothing of the lab page: the store is bundled here and evaluated in a blank page routed on the test origin.
import { createHash } from 'node:crypto';
import { expect, type Page, test, type Worker as PageWorker } from '@playwright/test';
import { build, type Rolldown } from 'vite';
import { patternBytes } from './opfs-store-harness';

type Harness = typeof import('./opfs-store-harness');

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const CONFIG = '{"model_type":"qwen2"}';
/** The weights: three write batches and a bit, cut by the reload inside the third. */
const WEIGHT_BYTES = 3 * 1024 * 1024 + 12_345;
const CUT = 2 * 1024 * 1024 + 700_000;
const ORIGIN = 'http://127.0.0.1:4311';

let bundle = '';

test.beforeAll(async () => {
  const out = await build({
    configFile: false,
    logLevel: 'silent',
    build: {
      write: false,
      minify: false,
      lib: {
        entry: new URL('./opfs-store-harness.ts', import.meta.url).pathname,
        formats: ['iife'],
        name: 'opfsHarness',
      },
    },
  });
  bundle = ((Array.isArray(out) ? out[0] : out) as Rolldown.RolldownOutput).output[0].code;
});

/** A blank page on the test origin with the harness loaded. */
async function openHarness(page: Page): Promise<void> {
  await page.route('**/opfs-store-harness', (route) =>
    route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>hub store</title>' }),
  );
  await page.goto('/opfs-store-harness');
  await page.evaluate(bundle);
}

/** A dedicated worker running the harness. */
async function startWorker(page: Page): Promise<PageWorker> {
  const [worker] = await Promise.all([
    page.waitForEvent('worker'),
    page.evaluate((code) => {
      const url = URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));
      (globalThis as unknown as { hubWorker: Worker }).hubWorker = new Worker(url);
    }, bundle),
  ]);
  // Its script has run once the harness is there.
  await worker.evaluate(
    () =>
      new Promise((ok) => {
        const ready = () => ('opfsHarness' in globalThis ? ok(null) : setTimeout(ready, 10));
        ready();
      }),
  );
  return worker;
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

test('a download cut by a reload resumes, commits, lists and is removed, freeing its storage (worker)', async ({
  page,
}) => {
  await openHarness(page);
  let worker = await startWorker(page);
  const args = { COMMIT, CONFIG, WEIGHT_BYTES, CUT, ORIGIN };

  const before = await worker.evaluate(async (a) => {
    const h = (globalThis as unknown as { opfsHarness: Harness }).opfsHarness;
    const opfs = await navigator.storage.getDirectory();
    await opfs.removeEntry('hub-test', { recursive: true }).catch(() => {});
    const root = await opfs.getDirectoryHandle('hub-test', { create: true });
    const store = h.opfsSnapshotStore(root);
    const repo = h.parseHubId('org/tiny');
    const syncHandles = 'createSyncAccessHandle' in FileSystemFileHandle.prototype;
    const config = new TextEncoder().encode(a.CONFIG);
    await store.begin?.(repo, {
      repo: repo.id,
      revision: repo.revision,
      commit: a.COMMIT,
      origin: a.ORIGIN,
      files: [
        { name: 'config.json', size: config.length },
        { name: 'model.safetensors', size: a.WEIGHT_BYTES },
      ],
    });
    const small = store.partial(repo, a.COMMIT, 'config.json');
    await small.append(config);
    await small.commit();
    const weights = store.partial(repo, a.COMMIT, 'model.safetensors');
    for (let at = 0, n = 1; at < a.CUT; at += n, n = (n * 7 + 65_537) % 200_000)
      await weights.append(h.patternBytes(at, Math.min(a.CUT, at + n)));
    // What the storage holds when the page goes: the batches written, not the one in memory.
    const snapshot = await (
      await (await root.getDirectoryHandle('models--org--tiny')).getDirectoryHandle('snapshots')
    ).getDirectoryHandle(a.COMMIT);
    const kept = (await (await snapshot.getFileHandle('model.safetensors.incomplete')).getFile()).size;
    return { kept, syncHandles, batch: h.WRITE_BATCH_BYTES };
  }, args);
  expect(before.syncHandles).toBe(true);
  expect(before.kept).toBeGreaterThanOrEqual(2 * before.batch);
  expect(before.kept).toBeLessThanOrEqual(CUT);
  expect(CUT - before.kept).toBeLessThan(before.batch);

  await page.reload();
  await page.evaluate(bundle);
  worker = await startWorker(page);
  const after = await worker.evaluate(async (a) => {
    const h = (globalThis as unknown as { opfsHarness: Harness }).opfsHarness;
    const root = await (await navigator.storage.getDirectory()).getDirectoryHandle('hub-test');
    const store = h.opfsSnapshotStore(root);
    const repo = h.parseHubId('org/tiny');
    const listedPartial = await store.list();
    const completeBefore = await store.complete(repo);
    const weights = store.partial(repo, a.COMMIT, 'model.safetensors');
    const resumedFrom = await weights.size();
    for (let at = resumedFrom; at < a.WEIGHT_BYTES; at += 100_003)
      await weights.append(h.patternBytes(at, Math.min(a.WEIGHT_BYTES, at + 100_003)));
    const hash = await weights.sha256();
    await weights.commit();
    const files = [
      { name: 'config.json', size: a.CONFIG.length },
      { name: 'model.safetensors', size: a.WEIGHT_BYTES },
    ];
    await store.finish(repo, { repo: repo.id, revision: 'main', commit: a.COMMIT, files });
    await store.finish(h.parseHubId('org/tiny@v1'), { repo: repo.id, revision: 'v1', commit: a.COMMIT, files });
    const manifest = await store.complete(repo);
    const readBack = h.sha256Hex(await store.read(repo, a.COMMIT, 'model.safetensors'));
    const listedComplete = await store.list();
    const usageKept = (await navigator.storage.estimate()).usage ?? 0;
    await store.remove('org/tiny', 'main');
    const afterMain = { listed: await store.list(), v1: await store.complete(h.parseHubId('org/tiny@v1')) };
    await store.remove('org/tiny', 'v1');
    const names: string[] = [];
    for await (const name of (root as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
    const usageFreed = (await navigator.storage.estimate()).usage ?? 0;
    return {
      listedPartial,
      completeBefore,
      resumedFrom,
      hash,
      manifest,
      readBack,
      listedComplete,
      afterMain,
      afterAll: { listed: await store.list(), names },
      usageKept,
      usageFreed,
    };
  }, args);

  const weights = patternBytes(0, WEIGHT_BYTES);
  const total = CONFIG.length + WEIGHT_BYTES;
  const kept = { repoId: 'org/tiny', commit: COMMIT, origin: ORIGIN, total };
  expect(after.listedPartial).toEqual([
    { ...kept, model: 'org/tiny', revision: 'main', bytes: CONFIG.length + before.kept, complete: false },
  ]);
  expect(after.completeBefore).toBeNull();
  expect(after.resumedFrom).toBe(before.kept);
  expect(after.hash).toBe(sha256(weights));
  expect(after.readBack).toBe(sha256(weights));
  expect(after.manifest?.files.map((f) => f.size)).toEqual([CONFIG.length, WEIGHT_BYTES]);
  expect(after.listedComplete).toEqual([
    { ...kept, model: 'org/tiny', revision: 'main', bytes: total, complete: true },
    { ...kept, model: 'org/tiny@v1', revision: 'v1', bytes: total, complete: true },
  ]);
  // Removing one revision keeps the snapshot another still points at; removing the last frees it.
  expect(after.afterMain.listed.map((m) => m.model)).toEqual(['org/tiny@v1']);
  expect(after.afterMain.v1?.commit).toBe(COMMIT);
  expect(after.afterAll).toEqual({ listed: [], names: [] });
  expect(after.usageKept - after.usageFreed).toBeGreaterThanOrEqual(WEIGHT_BYTES);
});

test("on the page's own thread: writable streams, truncate, discard, and copy where move is missing", async ({
  page,
}) => {
  await openHarness(page);
  const bytes = 1024 * 1024 + 4321;
  const r = await page.evaluate(
    async (a) => {
      const h = (globalThis as unknown as { opfsHarness: Harness }).opfsHarness;
      for (const proto of [FileSystemHandle.prototype, FileSystemFileHandle.prototype])
        delete (proto as { move?: unknown }).move;
      const moveGone = !('move' in FileSystemFileHandle.prototype);
      const noSyncHandle = !('createSyncAccessHandle' in FileSystemFileHandle.prototype);
      const opfs = await navigator.storage.getDirectory();
      await opfs.removeEntry('hub-test-page', { recursive: true }).catch(() => {});
      const root = await opfs.getDirectoryHandle('hub-test-page', { create: true });
      const store = h.opfsSnapshotStore(root);
      const repo = h.parseHubId('org/page@dev');
      const file = store.partial(repo, a.COMMIT, 'onnx/model.onnx');
      await file.append(h.patternBytes(0, 5000));
      const afterFirst = await file.size();
      await file.truncate();
      const afterTruncate = await file.size();
      for (let at = 0; at < a.bytes; at += 300_007)
        await file.append(h.patternBytes(at, Math.min(a.bytes, at + 300_007)));
      const size = await file.size();
      const hash = await file.sha256();
      await file.commit();
      const other = store.partial(repo, a.COMMIT, 'other.bin');
      await other.append(h.patternBytes(0, 10));
      await other.size();
      await other.discard();
      return {
        moveGone,
        noSyncHandle,
        afterFirst,
        afterTruncate,
        size,
        hash,
        committed: await store.committedSize(repo, a.COMMIT, 'onnx/model.onnx'),
        partialLeft: await store.committedSize(repo, a.COMMIT, 'onnx/model.onnx.incomplete'),
        discarded: await store.committedSize(repo, a.COMMIT, 'other.bin.incomplete'),
        listed: await store.list(),
      };
    },
    { COMMIT, bytes },
  );
  expect(r).toMatchObject({
    moveGone: true,
    noSyncHandle: true,
    afterFirst: 5000,
    afterTruncate: 0,
    size: bytes,
    committed: bytes,
    partialLeft: null,
    discarded: null,
  });
  expect(r.hash).toBe(sha256(patternBytes(0, bytes)));
  // No ref and no download record: listed by its folder, under the commit, never complete.
  expect(r.listed).toEqual([
    {
      model: `org/page@${COMMIT}`,
      repoId: 'org/page',
      revision: COMMIT,
      commit: COMMIT,
      origin: '',
      bytes,
      total: null,
      complete: false,
    },
  ]);
});
