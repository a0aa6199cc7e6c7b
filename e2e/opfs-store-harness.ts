// What the origin-private hub store's browser test (opfs-store.spec.ts) runs inside Chromium: bundled by the spec
// into one script that sets `globalThis.opfsHarness`, evaluated in a dedicated worker (the engine's context, with
// sync access handles) and on the page's main thread (the writable-stream path). Not a test file.
export { opfsSnapshotStore, WRITE_BATCH_BYTES } from '../src/io/opfs-snapshot-store';
export { parseHubId } from '../src/schema/hub-id';
export { sha256Hex } from '../src/core/sha256';

/** Bytes `start` to `end` of a test file: a fixed pattern, so the worker, the page and Node agree on them. */
export function patternBytes(start: number, end: number): Uint8Array {
  const out = new Uint8Array(end - start);
  for (let i = start; i < end; i++) out[i - start] = Math.imul(i, 0x9e3779b1) >>> 24;
  return out;
}
