// A hub client held to a list of connect sources (the page's CSP list): an endpoint or a redirect target outside
// it is refused naming its origin and the list, before any request to it, instead of the browser's bare
// "Failed to fetch"; inside it the download runs as usual. Then the transfer policy against a hostile mock hub, with
// timeouts of a second: a stall after the headers is cut and resumed a bounded number of times (each resume told),
// a HEAD never answered is named, an endless body is stopped at the announced size, a gzip body is refused before a
// byte is kept. Each case logs the seconds it took to be refused (no assertion on time: each ends in seconds).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMockHub, type MockHub } from '../testing/mock-hub';
import {
  downloadFile,
  fileMeta,
  transferPolicy,
  type HubClient,
  type PartialFile,
  type TransferNotice,
  type TransferPolicy,
} from './download';
import { parseHubId } from '../schema/hub-id';

const WEIGHTS = new Uint8Array(5000).map((_, i) => i % 251);

/** A PartialFile in memory, noting the most bytes it ever held. */
function memoryPartial(): PartialFile & { bytes(): Uint8Array; committed: boolean; most: number } {
  let chunks: Uint8Array[] = [];
  const bytes = () => {
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    chunks.reduce((at, c) => (out.set(c, at), at + c.length), 0);
    return out;
  };
  const p = {
    committed: false,
    most: 0,
    bytes,
    size: async () => bytes().length,
    append: async (c: Uint8Array) => {
      chunks.push(c.slice());
      p.most = Math.max(p.most, bytes().length);
    },
    truncate: async () => void (chunks = []),
    sha256: async () => Buffer.from(await crypto.subtle.digest('SHA-256', bytes())).toString('hex'),
    commit: async () => void (p.committed = true),
    discard: async () => void (chunks = []),
  };
  return p;
}

let hub: MockHub;
beforeEach(async () => {
  hub = await startMockHub({ 'org/tiny': { files: { 'config.json': '{}', 'model.safetensors': WEIGHTS } } });
});
afterEach(() => hub.close());

const repo = parseHubId('org/tiny');
const client = (sources: string[]): HubClient => ({ endpoint: new URL(hub.endpoint), token: null, fetch, sources });

describe('a hub client held to connect sources', () => {
  it('downloads through the endpoint and its CDN when both are listed', async () => {
    const c = client(['https://huggingface.co', hub.endpoint, hub.cdnOrigin]);
    const meta = await fileMeta(c, repo, 'model.safetensors');
    const partial = memoryPartial();
    await downloadFile(c, repo, 'model.safetensors', 'main', meta, partial);
    expect(partial.committed).toBe(true);
    expect(partial.bytes()).toEqual(WEIGHTS);
  });

  it('refuses an endpoint outside them before asking it anything', async () => {
    await expect(fileMeta(client(['https://huggingface.co']), repo, 'config.json')).rejects.toThrow(
      `${hub.endpoint} is not a hub origin this page may connect to (it allows https://huggingface.co)`,
    );
    expect(hub.requests).toEqual([]);
  });

  it('refuses a redirect to a CDN outside them, naming it, before the CDN is asked', async () => {
    const c = client([hub.endpoint]);
    const meta = await fileMeta(c, repo, 'model.safetensors');
    expect(meta.location.origin).toBe(hub.cdnOrigin);
    const partial = memoryPartial();
    await expect(downloadFile(c, repo, 'model.safetensors', 'main', meta, partial)).rejects.toThrow(
      `${hub.cdnOrigin} is not a hub origin this page may connect to (it allows ${hub.endpoint}); a mirror's origin is added at build with RL_LAB_EXTRA_HUB_ORIGINS`,
    );
    expect(hub.requests.filter((r) => r.server === 'cdn')).toEqual([]);
    expect(partial.committed).toBe(false);
  });
});

/** Timeouts of a second and short back-offs, so each hostile case ends in seconds. */
const QUICK: Partial<TransferPolicy> = {
  headersTimeoutMs: 1000,
  idleTimeoutMs: 1000,
  resumes: 2,
  backoffMs: 50,
  maxBackoffMs: 100,
};
const quick = (): HubClient => ({ endpoint: new URL(hub.endpoint), token: null, fetch, transfer: QUICK });
const host = (origin: string) => new URL(origin).host;

/** Runs `refused` (which must reject), logging how long the refusal took; returns its message. */
async function timeRefusal(what: string, refused: () => Promise<unknown>): Promise<string> {
  const t0 = performance.now();
  const message = await refused().then(
    () => 'resolved',
    (e: Error) => e.message,
  );
  console.log(`${what}: refused after ${((performance.now() - t0) / 1000).toFixed(2)} s: ${message}`);
  return message;
}

describe('the transfer policy against a hostile hub', () => {
  it('has sensible defaults: 30 s to the headers and between bytes, 3 resumes', () => {
    expect(transferPolicy({})).toMatchObject({ headersTimeoutMs: 30_000, idleTimeoutMs: 30_000, resumes: 3 });
  });

  it('cuts a transfer that stalls after the headers, resumes it a bounded number of times, and keeps what came', async () => {
    hub.faults.stall = { file: 'model.safetensors', afterBytes: 1000 };
    const c = quick();
    const meta = await fileMeta(c, repo, 'model.safetensors');
    const partial = memoryPartial();
    const notices: TransferNotice[] = [];
    const message = await timeRefusal('stall after headers', () =>
      downloadFile(c, repo, 'model.safetensors', 'main', meta, partial, undefined, (n) => notices.push(n)),
    );
    expect(message).toBe(
      `model.safetensors of org/tiny at revision main: the download stopped at 3000 of 5000 bytes after 3 tries (no data from ${host(hub.cdnOrigin)} for 1 s while downloading model.safetensors); the partial file is kept, run again to resume`,
    );
    // Each try brought 1000 bytes before the server fell silent (the mock stalls every GET the same way).
    expect(partial.bytes()).toEqual(WEIGHTS.subarray(0, 3000));
    expect(partial.committed).toBe(false);
    // Each resume is told (which of how many, after what, from which byte) and asks for the rest only.
    expect(notices.filter((n) => n.kind === 'retrying')).toEqual([
      expect.objectContaining({ retry: 1, retries: 2, waitMs: 50, bytes: 1000 }),
      expect.objectContaining({ retry: 2, retries: 2, waitMs: 100, bytes: 2000 }),
    ]);
    expect(notices.some((n) => n.kind === 'stalled' && n.file === 'model.safetensors')).toBe(true);
    const gets = hub.requests.filter((r) => r.server === 'cdn' && r.method === 'GET');
    expect(gets.map((r) => r.range)).toEqual([null, 'bytes=1000-', 'bytes=2000-']);
  });

  it('names a hub that never answers a HEAD, with its host and the file', async () => {
    hub.faults.silentHead = { file: 'config.json' };
    const message = await timeRefusal('HEAD never answered', () => fileMeta(quick(), repo, 'config.json'));
    expect(message).toBe(
      `no answer from ${host(hub.endpoint)} for 1 s while asking for config.json of org/tiny (HEAD)`,
    );
  });

  it('stops a body that runs past the announced size the moment it would, and removes the download', async () => {
    hub.faults.endless = { file: 'model.safetensors' };
    const c = quick();
    const meta = await fileMeta(c, repo, 'model.safetensors');
    const partial = memoryPartial();
    const message = await timeRefusal('endless body', () =>
      downloadFile(c, repo, 'model.safetensors', 'main', meta, partial),
    );
    expect(message).toBe(
      `model.safetensors of org/tiny at revision main: ${host(hub.cdnOrigin)} sent more than the 5000 bytes the hub announced (the transfer was stopped at the first byte past them); removed the download`,
    );
    expect(partial.most).toBeLessThanOrEqual(5000);
    expect(partial.bytes().length).toBe(0);
  });

  it('refuses a gzip-encoded body (a bomb) before keeping a byte of it', async () => {
    hub.faults.gzip = { file: 'model.safetensors', inflatedBytes: 64 << 20 };
    const c = quick();
    const meta = await fileMeta(c, repo, 'model.safetensors');
    const partial = memoryPartial();
    const message = await timeRefusal('gzip body', () =>
      downloadFile(c, repo, 'model.safetensors', 'main', meta, partial),
    );
    expect(message).toBe(
      `model.safetensors of org/tiny at revision main: ${host(hub.cdnOrigin)} sent it with Content-Encoding gzip; the announced size and hash are of the file itself, so an encoded body is not accepted; removed the download`,
    );
    expect(partial.most).toBe(0);
  });

  it('a stop (the page pausing) ends a back-off at once', async () => {
    hub.faults.stall = { file: 'model.safetensors', afterBytes: 10 };
    const stop = new AbortController();
    const c: HubClient = {
      ...quick(),
      transfer: { ...QUICK, backoffMs: 60_000, maxBackoffMs: 60_000 },
      signal: stop.signal,
    };
    const meta = await fileMeta(c, repo, 'model.safetensors');
    const message = await timeRefusal('stopped in back-off', () =>
      downloadFile(c, repo, 'model.safetensors', 'main', meta, memoryPartial(), undefined, (n) => {
        if (n.kind === 'retrying') stop.abort();
      }),
    );
    expect(message).toBe('model.safetensors of org/tiny at revision main: stopped');
  });
});
