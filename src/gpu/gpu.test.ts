// The runtime itself: errors name the kernel, profiling returns per-dispatch timings, grids cover large counts,
// tensors check their shapes (uniform packing: params.test.ts).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuValidationError, compileReport, countsSince, grid, type GpuContext } from '.';
import { acquireNodeDevice } from './node';
import { add, fill, scale } from '../kernels/elementwise';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

describe('GPU runtime', () => {
  it('reports the adapter and the limits it obtained', () => {
    expect(ctx.report.runtime).toBe('node');
    expect(ctx.report.limits.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(128 * 1024 * 1024);
    expect(ctx.report.vendor.length).toBeGreaterThan(0);
  });

  it('a WGSL compile error names the file and line', async () => {
    const fam = ctx.family('broken', '@compute @workgroup_size(1) fn broken_main() { let x: f32 = undefined_name; }');
    const rec = ctx.recorder('compile-error');
    expect(() => rec.dispatch({ family: fam, entry: 'broken_main', bindings: [], workgroups: [1] })).not.toThrow();
    rec.submit();
    const err = await ctx.flush().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuValidationError);
    expect(String((err as Error).message)).toMatch(/broken\.wgsl:1:\d+/);
    expect(String((err as Error).message)).toMatch(/undefined_name/);
  });

  it('tells compile listeners of each pipeline once, as it is compiled, until they unsubscribe', () => {
    const heard: string[] = [];
    const stop = ctx.onCompiled((r) => heard.push(r.pipeline));
    const before = ctx.compileLog().length;
    const fam = ctx.family(
      'listened',
      'override width: u32 = 1u;\n@compute @workgroup_size(width) fn listened_main() {}',
    );
    fam.pipeline('listened_main');
    fam.pipeline('listened_main'); // cached: not compiled again
    stop();
    fam.pipeline('listened_main', { width: 2 });
    expect(heard).toEqual(['listened.listened_main']);
    expect(ctx.compileLog().length - before).toBe(2);
  });

  it('times the first dispatch of each pipeline alone when measuring compiles, with the same results', async () => {
    const fam = ctx.family(
      'probed',
      '@group(0) @binding(1) var<storage, read_write> o: array<f32>;\n' +
        '@compute @workgroup_size(1) fn probed_double() { o[0] = o[0] * 2.0 + 1.0; }\n' +
        '@compute @workgroup_size(1) fn probed_square() { o[0] = o[0] * o[0]; }',
    );
    const out = ctx.fromArray([3], [1], { label: 'probed-out' });
    const copied = ctx.tensor([1], { label: 'probed-copy' });
    ctx.measureFirstDispatches = true;
    try {
      const rec = ctx.recorder('probe');
      // double, square, double: (3*2+1)^2*2+1 = 99 only if the split command buffers keep the order.
      for (const entry of ['probed_double', 'probed_square', 'probed_double'])
        rec.dispatch({ family: fam, entry, bindings: [out], workgroups: [1] });
      scale(rec, copied, out, 1); // a pipeline created elsewhere is probed too
      rec.submit();
      const [o, c] = await ctx.readMany([out, copied]);
      expect([o[0], c[0]]).toEqual([99, 99]);
      await ctx.firstDispatchesTimed();
    } finally {
      ctx.measureFirstDispatches = false;
    }
    const records = ctx.compileLog().filter((r) => r.family === 'probed');
    expect(records.map((r) => r.pipeline)).toEqual(['probed.probed_double', 'probed.probed_square']);
    for (const r of records) expect(r.firstDispatchMs).toBeGreaterThanOrEqual(0);
    expect(compileReport(records, Number.POSITIVE_INFINITY)[0]).toMatch(
      /^2 pipelines compiled .*creation \+ first dispatch/,
    );
  });

  it('a validation error names the kernel by its label', async () => {
    const a = ctx.tensor([8], { label: 'a' });
    const b = ctx.tensor([8], { label: 'b' });
    const out = ctx.tensor([8], { label: 'out' });
    const rec = ctx.recorder('bad-binding');
    // Binding the same buffer as read_write output and read-only input in one dispatch is invalid in WebGPU.
    add(rec, out, out, b);
    rec.submit();
    const err = await ctx.flush().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuValidationError);
    expect(String((err as Error).message)).toMatch(/elementwise\.elementwise_add/);
    expect(String((err as Error).message)).toMatch(/bad-binding/);
    for (const t of [a, b, out]) t.destroy();
  });

  it('profiling records one timing per dispatch', async () => {
    const out = ctx.tensor([1000], { label: 'out' });
    const rec = ctx.recorder('profiled', { profile: true });
    fill(rec, out, 1);
    fill(rec, out, 2);
    rec.submit();
    const timings = await rec.timings();
    await ctx.flush();
    if (ctx.device.features.has('timestamp-query')) {
      expect(timings.map((t) => t.label)).toEqual(['elementwise.elementwise_fill', 'elementwise.elementwise_fill']);
    } else {
      expect(timings).toHaveLength(1);
    }
    for (const t of timings) expect(t.ms).toBeGreaterThanOrEqual(0);
    expect(Array.from(await ctx.read(out)).every((v) => v === 2)).toBe(true);
    out.destroy();
  });

  it('only one recorder is open at a time, and readback refuses to run inside one', async () => {
    const rec = ctx.recorder('first');
    expect(() => ctx.recorder('second')).toThrow(/still open/);
    const t = ctx.tensor([4]);
    await expect(ctx.read(t)).rejects.toThrow(/submit it first/);
    rec.submit();
    await ctx.flush();
    t.destroy();
  });

  it('tensors check sizes on upload and reshape', () => {
    const t = ctx.tensor([2, 3], { label: 'x' });
    expect(() => ctx.upload(t, new Float32Array(5))).toThrow(/got 5 elements, want 6/);
    expect(() => t.reshape([4])).toThrow(/element counts differ/);
    expect(t.reshape([3, 2]).shape).toEqual([3, 2]);
    t.destroy();
  });

  it('u32 and i32 tensors round-trip', async () => {
    const u = ctx.fromArray(new Uint32Array([0, 1, 4294967295]), [3], { dtype: 'u32' });
    const i = ctx.fromArray(new Int32Array([-5, 0, 7]), [3], { dtype: 'i32' });
    const [ru, ri] = await ctx.readMany([u, i]);
    expect(Array.from(ru)).toEqual([0, 1, 4294967295]);
    expect(Array.from(ri)).toEqual([-5, 0, 7]);
  });
});

describe('helpers', () => {
  it('counts the bind groups it makes per phase (a cached one is not made again) and the host time recording', async () => {
    const [a, b, out] = [0, 1, 2].map((i) => ctx.tensor([8], { label: `counted-${i}` }));
    const before = ctx.counts.snapshot();
    for (const label of ['counted.first', 'counted.again']) {
      const rec = ctx.recorder(label);
      add(rec, out, a, b); // the same kernel, tensors and parameters: made once, then cached
      add(rec, out, a, b);
      scale(rec, out, a, 2); // another kernel
      scale(rec, out, a, 3); // other parameters: another uniform buffer, so another bind group
      rec.submit();
    }
    const c = countsSince(before, ctx.counts.snapshot());
    expect(c.phases['counted.first'].bindGroups).toBe(3);
    expect(c.phases['counted.again'].bindGroups).toBe(0);
    expect(c.bindGroups).toBe(3);
    for (const label of ['counted.first', 'counted.again']) expect(c.recordingMs[label]).toBeGreaterThan(0);
    await ctx.read(out);
    for (const t of [a, b, out]) t.destroy();
  });

  it('grid() spreads large workgroup counts over two dimensions without losing any', () => {
    expect(grid(10)).toEqual([10, 1]);
    for (const n of [65535, 65536, 1_000_003]) {
      const [x, y] = grid(n);
      expect(x).toBeLessThanOrEqual(65535);
      expect(x * y).toBeGreaterThanOrEqual(n);
    }
  });
});
