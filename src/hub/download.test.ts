// A hub client held to a list of connect sources (the page's CSP list): an endpoint or a redirect target outside
// it is refused naming its origin and the list, before any request to it, instead of the browser's bare
// "Failed to fetch"; inside it the download runs as usual. Against the mock hub and its CDN.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMockHub, type MockHub } from '../testing/mock-hub';
import { downloadFile, fileMeta, type HubClient, type PartialFile } from './download';
import { parseHubId } from '../schema/hub-id';

const WEIGHTS = new Uint8Array(5000).map((_, i) => i % 251);

/** A PartialFile in memory. */
function memoryPartial(): PartialFile & { bytes(): Uint8Array; committed: boolean } {
  let chunks: Uint8Array[] = [];
  const bytes = () => {
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    chunks.reduce((at, c) => (out.set(c, at), at + c.length), 0);
    return out;
  };
  const p = {
    committed: false,
    bytes,
    size: async () => bytes().length,
    append: async (c: Uint8Array) => void chunks.push(c.slice()),
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
