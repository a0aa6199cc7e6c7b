// The fast tier holds no test file that acquires a WebGPU device, and the two tiers together run every test file
// once: read from the Vitest projects of vite.config.ts itself.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vite.config';
import { needsOwnWorker, testTiers, tierOf } from './tiers';

const ROOT = join(import.meta.dirname, '../..');

/** The include list of each Vitest project, by name. */
function projects(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const p of (config.test?.projects ?? []) as { test?: { name?: string; include?: string[] } }[]) {
    out[p.test?.name ?? '?'] = p.test?.include ?? [];
  }
  return out;
}

/** A tier's files: its shared project's and its alone project's. */
const tierFiles = (p: Record<string, string[]>, tier: string) => [...p[tier], ...p[`${tier}-alone`]].sort();

describe('test tiers', () => {
  it('splits every test file into fast or slow, once', () => {
    const p = projects();
    const [fast, slow] = [tierFiles(p, 'fast'), tierFiles(p, 'slow')];
    const tiers = testTiers(ROOT);
    expect(fast).toEqual(tiers.fast);
    expect(slow).toEqual(tiers.slow);
    expect(p.fast.filter((f) => p['fast-alone'].includes(f))).toEqual([]);
    expect(p.slow.filter((f) => p['slow-alone'].includes(f))).toEqual([]);
    // jax-js binds one device per process: the bench and its jax-js peer's test each run in their own.
    expect(p['slow-alone']).toEqual(
      expect.arrayContaining(['src/bench/bench.test.ts', 'src/bench/peer-jaxjs.test.ts']),
    );
    expect(p['fast-alone']).toContain('src/schema/config/throwaway-knob.test.ts');
    expect(p.slow.length).toBeGreaterThan(p['slow-alone'].length);
    expect(p.fast.length).toBeGreaterThan(p['fast-alone'].length);
    expect(fast.length).toBeGreaterThan(30);
    expect(slow.length).toBeGreaterThan(10);
    expect(fast.filter((f) => slow.includes(f))).toEqual([]);
  });

  it('keeps every file that acquires a device out of the fast tier', () => {
    const p = projects();
    const [fast, slow] = [tierFiles(p, 'fast'), tierFiles(p, 'slow')];
    // Independent of tiers.ts's signs: the files that import the device helpers.
    const acquiresDevice = /^import\s[^;]*?from\s+'[^']*\/(?:testing\/test-device|gpu\/node)'/m;
    const acquires = [...fast, ...slow].filter((f) => acquiresDevice.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(acquires.length).toBeGreaterThan(10);
    expect(acquires.filter((f) => fast.includes(f))).toEqual([]);
    expect(fast).toContain('src/testing/tiers.test.ts');
    expect(slow).toContain('src/kernels/kernels.test.ts');
  });

  it('reads the signs of a device, a CLI child process or a real training run', () => {
    expect(tierOf("import { useNodeDevice } from '../testing/test-device';")).toBe('slow');
    expect(tierOf('const ctx = await acquireNodeDevice();')).toBe('slow');
    expect(tierOf("import { create } from 'webgpu';")).toBe('slow');
    expect(tierOf("import { spawnSync } from 'node:child_process';")).toBe('slow');
    expect(tierOf('const engine = new LabEngine(deps);')).toBe('slow');
    expect(tierOf("import { grpoAdvantages } from './advantages';")).toBe('fast');
  });

  it('reads the signs of a file that needs a worker of its own', () => {
    expect(needsOwnWorker('  await useJaxOnDevice(ctx);')).toBe(true);
    expect(needsOwnWorker('    report = await runBench(ctx, {')).toBe(true);
    expect(needsOwnWorker("vi.mock('./tuned-device', async (real) => ({")).toBe(true);
    expect(needsOwnWorker('const ctx = await acquireNodeDevice();')).toBe(false);
    expect(needsOwnWorker("// a comment naming 'vi.mock(' is not a call")).toBe(false);
  });
});
