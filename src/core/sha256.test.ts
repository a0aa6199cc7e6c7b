// The incremental SHA-256 against node:crypto: lengths around the 55/56/64-byte padding edges, chunked updates in
// random cuts, a digest taken mid-stream that leaves the hash going on, and a resume from a prefix read back.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Rng } from './random';
import { Sha256, sha256Hex } from './sha256';

const nodeSha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

function bytes(n: number, seed: number): Uint8Array {
  const rng = new Rng(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = rng.int(256);
  return out;
}

describe('Sha256', () => {
  it('hashes the FIPS 180-4 examples', () => {
    expect(sha256Hex(new Uint8Array())).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex(new TextEncoder().encode('abc'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('matches node:crypto at every length from 0 to 200 and at the block edges above', () => {
    const lengths = [...Array.from({ length: 201 }, (_, i) => i), 1000, 4095, 4096, 4097, 65_537];
    for (const n of lengths) {
      const data = bytes(n, n + 1);
      expect(sha256Hex(data), `length ${n}`).toBe(nodeSha256(data));
    }
  });

  it('gives the same digest however the bytes are cut into updates', () => {
    const data = bytes(10_000, 7);
    const rng = new Rng(11);
    for (let trial = 0; trial < 20; trial++) {
      const h = new Sha256();
      for (let at = 0; at < data.length; ) {
        const n = Math.min(data.length - at, rng.int(trial < 10 ? 70 : 3000));
        h.update(data.subarray(at, at + n));
        at += n;
      }
      expect(h.bytes).toBe(data.length);
      expect(h.digestHex()).toBe(nodeSha256(data));
    }
  });

  it('takes a digest mid-stream and goes on', () => {
    const data = bytes(300, 3);
    const h = new Sha256().update(data.subarray(0, 56));
    expect(h.digestHex()).toBe(nodeSha256(data.subarray(0, 56)));
    h.update(data.subarray(56, 64));
    expect(h.digestHex()).toBe(nodeSha256(data.subarray(0, 64)));
    h.update(data.subarray(64));
    expect(h.digestHex()).toBe(nodeSha256(data));
  });

  it('resumes a cut download: the kept prefix read back in chunks, then the rest as it arrives', () => {
    const file = bytes(200_001, 5);
    const kept = 123_457;
    const h = new Sha256();
    for (let at = 0; at < kept; at += 4096) h.update(file.subarray(at, Math.min(at + 4096, kept)));
    for (let at = kept; at < file.length; at += 1000) h.update(file.subarray(at, at + 1000));
    expect(h.digestHex()).toBe(nodeSha256(file));
  });
});
