// The page's reward-function sandbox on its own, in real Chromium under the page's real Content-Security-Policy:
// the sandbox's modules (src/worker/reward-sandbox.ts, sandbox-host.ts) are bundled into a small page served on the
// lab's origin, with index.html's policy, and a reward function probes its scope. It finds no storage, file system,
// network, messaging or worker API; nothing a first sandbox writes is there for a second; text that closes the
// runner's parenthesis only fails to compile; it cannot post a reply of its own; and 2 GiB of ArrayBuffers are
// refused with a message, after which a plain function scores in a fresh sandbox. The app's own run with a reward_fn
// is e2e/rewards.spec.ts.
import { readFileSync } from 'node:fs';
import { build } from 'vite';
import { expect, test, type Page } from '@playwright/test';

const root = new URL('..', import.meta.url).pathname;

/** index.html's Content-Security-Policy, as the page has it. */
function pagePolicy(): string {
  const m = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(
    readFileSync(`${root}index.html`, 'utf8'),
  );
  if (!m) throw new Error('index.html has no Content-Security-Policy');
  return m[1];
}

/** The page's end of the sandbox and the engine worker's, in one bundle: window.score(source, batch). */
const HARNESS = `
  import { browserRewardSandbox } from '${root}src/worker/reward-sandbox.ts';
  import { hostSandboxes, sandboxClient } from '${root}src/worker/sandbox-host.ts';
  const channel = new MessageChannel();
  hostSandboxes(channel.port1);
  const sandbox = browserRewardSandbox(sandboxClient(channel.port2));
  window.score = async (source, batch, timeLimitMs) => {
    const f = sandbox(source, { timeLimitMs });
    try { return await f.score(batch); } catch (e) { return String(e.message); } finally { f.destroy(); }
  };
  window.scoreTwice = async (source, batch) => {
    const f = sandbox(source, { timeLimitMs: 20000 });
    const out = [];
    for (let i = 0; i < 2; i++) {
      try { out.push(await f.score(batch)); } catch (e) { out.push(String(e.message)); }
    }
    f.destroy();
    return out;
  };
`;

/** HARNESS built by Vite, as the page's own script would be (once per test worker). */
let built: Promise<string> | null = null;
const harness = () => {
  built ??= buildHarness();
  return built;
};

async function buildHarness(): Promise<string> {
  const entry = '\0reward-sandbox-harness';
  const out = await build({
    configFile: false,
    root,
    logLevel: 'silent',
    plugins: [
      {
        name: 'reward-sandbox-harness',
        resolveId: (id) => (id === entry ? entry : null),
        load: (id) => (id === entry ? HARNESS : null),
      },
    ],
    build: { write: false, target: 'es2022', rollupOptions: { input: entry, output: { format: 'iife' } } },
  });
  const result = Array.isArray(out) ? out[0] : out;
  if (!('output' in result)) throw new Error('the harness build gave no output');
  return result.output[0].code;
}

const item = { prompt: 'copy:abc=', answer: 'abc' };
const batch = [
  { prompt: item.prompt, completion: 'abc', item },
  { prompt: item.prompt, completion: 'abx', item },
];

async function open(page: Page): Promise<void> {
  const script = await harness();
  const policy = pagePolicy();
  const requests: string[] = [];
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url());
    requests.push(url.href);
    if (url.pathname === '/sandbox-harness.html')
      return route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><meta http-equiv="Content-Security-Policy" content="${policy}"><script src="/sandbox-harness.js"></script>`,
      });
    if (url.pathname === '/sandbox-harness.js') return route.fulfill({ contentType: 'text/javascript', body: script });
    return route.abort();
  });
  await page.goto('/sandbox-harness.html');
  await page.waitForFunction(() => 'score' in window);
}

type Score = (source: string, b: typeof batch, timeLimitMs?: number) => Promise<unknown>;
const score = (page: Page, source: string, timeLimitMs = 20_000) =>
  page.evaluate(([s, b, t]) => (window as unknown as { score: Score }).score(s, b, t), [
    source,
    batch,
    timeLimitMs,
  ] as const);

/** Every API a worker could store, read back, send or start something with. */
const APIS = [
  'webkitRequestFileSystem',
  'webkitRequestFileSystemSync',
  'webkitResolveLocalFileSystemURL',
  'webkitResolveLocalFileSystemSyncURL',
  'requestFileSystem',
  'indexedDB',
  'caches',
  'localStorage',
  'sessionStorage',
  'cookieStore',
  'navigator',
  'BroadcastChannel',
  'MessageChannel',
  'Worker',
  'SharedWorker',
  'importScripts',
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'WebSocketStream',
  'WebTransport',
  'EventSource',
  'postMessage',
  'close',
  'addEventListener',
  'dispatchEvent',
  'onmessage',
  'self',
  'location',
  'setTimeout',
  'setInterval',
  'structuredClone',
  'crypto',
  'Blob',
  'URL',
  'FileReaderSync',
  'OffscreenCanvas',
  'WebAssembly',
  'SharedArrayBuffer',
];

test('a reward function finds no storage, file system, network, messaging or worker API in its sandbox', async ({
  page,
}) => {
  await open(page);
  // Each name, looked up as a bare identifier (the scope chain) and along the global's prototypes; any found is named.
  const probe = `() => {
    const names = ${JSON.stringify(APIS)};
    const seen = { ${APIS.map((n) => `${JSON.stringify(n)}: typeof ${n}`).join(', ')} };
    const found = names.filter((n) => {
      if (seen[n] !== 'undefined') return true;
      for (let o = globalThis; o; o = Object.getPrototypeOf(o)) if (Object.getOwnPropertyNames(o).includes(n)) return true;
      return false;
    });
    if (found.length) throw new Error('reachable: ' + found.join(', '));
    return Object.getOwnPropertyNames(globalThis).length;
  }`;
  const scores = (await score(page, probe)) as { reward: number }[] | string;
  expect(scores, String(scores)).toHaveLength(2);
});

test('nothing a first sandbox writes with any storage API is there for a second, fresh one', async ({ page }) => {
  await open(page);
  // Every way of keeping something, each tried in its own try; the second sandbox reads the same places back.
  const attempts = (write: boolean) => `() => {
    const kept = [];
    const tryIt = (name, f) => { try { const v = f(); if (v) kept.push(name); } catch (e) {} };
    tryIt('filesystem', () => {
      const fs = webkitRequestFileSystemSync(0, 1024);
      ${write ? "const w = fs.root.getFile('leak.txt', { create: true }).createWriter(); w.write(new Blob(['leak'])); return true;" : "return fs.root.getFile('leak.txt', {}).file().size > 0;"}
    });
    tryIt('filesystem-url', () => { webkitResolveLocalFileSystemSyncURL('filesystem:' + location.origin + '/temporary/leak.txt'); return true; });
    tryIt('indexedDB', () => { indexedDB.open('leak'); return true; });
    tryIt('caches', () => { caches.open('leak'); return true; });
    tryIt('localStorage', () => { ${write ? "localStorage.setItem('leak', '1'); return true;" : "return localStorage.getItem('leak') === '1';"} });
    tryIt('opfs', () => { navigator.storage.getDirectory(); return true; });
    tryIt('broadcast', () => { new BroadcastChannel('leak').postMessage('leak'); return true; });
    tryIt('global', () => { ${write ? 'globalThis.leak = 1; return false;' : 'return globalThis.leak === 1;'} });
    tryIt('object-prototype', () => { ${write ? 'Object.prototype.leak = 1; return false;' : 'return ({}).leak === 1;'} });
    if (kept.length) throw new Error('kept: ' + kept.join(', '));
    return 0;
  }`;
  const first = await score(page, attempts(true));
  expect(first, String(first)).toHaveLength(2);
  const second = await score(page, attempts(false));
  expect(second, String(second)).toHaveLength(2);
});

test('a function cannot replace the runner or post a reply of its own; the host refuses what the runner would not', async ({
  page,
}) => {
  await open(page);
  // Closing the runner's parenthesis early: only the person's own script fails to parse.
  const forged = JSON.stringify({ ok: true, scores: [{ reward: 1e308 }, { reward: 1e308 }] });
  expect(await score(page, `0); return function run(b){ return ${JSON.stringify(forged)}; }; (0`)).toMatch(
    /^reward_fn does not compile( \(line 1, column \d+\))?: SyntaxError: Illegal return statement/,
  );
  expect(await score(page, `0); postMessage(${JSON.stringify(forged)}); (0`)).toMatch(
    /^reward_fn does not compile( \(line 1(, column \d+)?\))?: ReferenceError: postMessage is not defined/,
  );
  // From inside the function, at load and on every call: there is no way to post.
  const tries = `(() => {
    const post = (m) => { for (const f of [() => postMessage(m), () => globalThis.postMessage(m), () => self.postMessage(m)]) try { f(); } catch (e) {} };
    post(${JSON.stringify(forged)});
    return () => { post(${JSON.stringify(forged)}); return 0.5; };
  })()`;
  expect(await score(page, tries)).toEqual([
    { reward: 0.5, parts: {} },
    { reward: 0.5, parts: {} },
  ]);
  // Bending the runner's builtins still yields nothing the host takes: its reply is checked again.
  const bent =
    '(() => { Array.prototype.push = function (s) { this[this.length] = { reward: "1", parts: null }; return this.length; }; return () => 1; })()';
  expect(await score(page, bent)).toMatch(/^reward_fn returned the string "1" for completion 0 \("abc"/);
  const names =
    '() => ({ reward: 1, parts: Object.fromEntries(Array.from({ length: 256 }, (_, i) => ["x".repeat(1 << 10) + i, 1])) })';
  expect(await score(page, names)).toMatch(/returned an object with 256 parts \(at most 16\) for completion 0/);
});

test('2 GiB of ArrayBuffers are refused with a message, and the next batch scores in a fresh sandbox', async ({
  page,
}) => {
  await open(page);
  const hog =
    '(p, c) => { if (c === "abx") { const keep = []; for (let i = 0; i < 2048; i++) keep.push(new ArrayBuffer(1 << 20)); } return 1; }';
  const both = await page.evaluate(
    ([s, b]) => (window as unknown as { scoreTwice: (s: string, b: unknown) => Promise<unknown[]> }).scoreTwice(s, b),
    [hog, batch] as const,
  );
  expect(both[0]).toMatch(
    /^reward_fn tried to hold more than 256 MiB in ArrayBuffers and typed arrays \(256 MiB held, 1 MiB more asked for\) on completion 1 \("abx"/,
  );
  expect(both[1]).toMatch(/^reward_fn tried to hold more than 256 MiB/);
  const typed = '() => { try { new Float64Array(2 ** 28); } catch (e) {} return 1; }';
  expect(await score(page, typed)).toMatch(/\(0 MiB held, 2048 MiB more asked for\) on completion 0/);
  expect(await score(page, '(p, c) => c.length')).toEqual([
    { reward: 3, parts: {} },
    { reward: 3, parts: {} },
  ]);
});
