// The row kernels' two lane-merge variants (src/kernels/wgsl-blocks.ts): workgroup memory (block row-lanes) and
// subgroups (block row-lanes-subgroup). The variant follows the device's features; both match the CPU twins at
// awkward row lengths; the subgroup block's assumption about how a workgroup splits into subgroups holds on the
// test device. Two devices on one adapter: the default one (with `subgroups` where the adapter has it, as
// SwiftShader does) and one created without it, which runs the fallback. Not the cases' definitions (cases.ts).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext, Tensor } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import * as refLogprob from '../reference/logprob';
import * as refSoftmax from '../reference/softmax';
import type { HostTensor } from '../core/host-tensor';
import { kernelCases } from './cases';
import { LOGPROB_SHADER, logprobForward } from './logprob';
import { rowLayout } from './rows';
import * as softmax from './softmax';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';
import { gpuTwinCase, randomHost, randomInts, simpleCase, type KernelCase } from './verify';
import { ROW_REDUCTION_FAMILIES, rowFamily, rowReductionOf } from './wgsl-blocks';

const withSubgroups = useNodeDevice();
let fallbackCtx: GpuContext | undefined;
beforeAll(async () => {
  fallbackCtx = await acquireNodeDevice({ withoutFeatures: ['subgroups'] });
});
afterAll(() => fallbackCtx?.destroy());
const fallback = {
  get ctx(): GpuContext {
    if (!fallbackCtx) throw new Error('the fallback device is acquired in beforeAll');
    return fallbackCtx;
  },
};

/** Row lengths around warp and workgroup sizes and a real vocabulary (lanes per row: 1 up to 1000, 64 at 49,152). */
const AWKWARD_LENGTHS = [1, 31, 33, 65, 99, 1000, 1024, 4096, 49_152];

/** Rows: one more than a workgroup holds (a partial last workgroup), at most 3 for long rows. */
const rowsFor = (cols: number) => Math.min(rowLayout(cols).ROWS + 1, cols >= 4096 ? 3 : 65);

function awkwardCases(): KernelCase[] {
  return AWKWARD_LENGTHS.flatMap((V) => {
    const N = rowsFor(V);
    const shape = [N, V];
    const tag = `${N}x${V} (${rowLayout(V).LANES} lanes)`;
    const tau = 0.7;
    return [
      simpleCase({
        name: `softmaxForward ${tag}`,
        family: 'softmax',
        out: shape,
        inputs: [{ shape, scale: 3 }],
        gpu: softmax.softmaxForward,
        twin: refSoftmax.softmaxForward,
        tol: { atol: 1e-6, rtol: 1e-5 },
      }),
      simpleCase({
        name: `logSoftmaxBackward ${tag}`,
        family: 'softmax',
        out: shape,
        inputs: [{ shape }, { shape }],
        gpu: softmax.logSoftmaxBackward,
        twin: refSoftmax.logSoftmaxBackward,
        tol: { atol: 1e-5, rtol: 1e-5 },
      }),
      gpuTwinCase({
        name: `logprobForward ${tag} tau=${tau}`,
        family: 'logprob',
        inputs: (rng) => [randomHost(rng, shape, 3), randomInts(rng, [N], V)],
        outputs: [{ shape: [N] }, { shape: [N] }],
        gpu: (rec, [lp, h], [logits, targets]) =>
          logprobForward(rec, lp, h, logits, targets as Tensor<'u32'>, { temperature: tau }),
        twin: ([lp, h], [logits, targets]) =>
          refLogprob.logprobForward(lp, h, logits as HostTensor<Float32Array>, targets.data as Uint32Array, {
            temperature: tau,
          }),
        tol: { atol: 2e-5, rtol: 1e-5 },
      }),
    ];
  });
}

describe('the row reduction variant follows the device features', () => {
  it('subgroups exactly on a device created with the feature; the family compiles that variant', () => {
    const hasSubgroups = withSubgroups.ctx.report.features.includes('subgroups');
    console.log(`adapter reports subgroups: ${hasSubgroups}`);
    expect(rowReductionOf(withSubgroups.ctx)).toBe(hasSubgroups ? 'subgroups' : 'workgroup');
    expect(rowReductionOf(fallback.ctx)).toBe('workgroup');
    expect(fallback.ctx.report.features).not.toContain('subgroups');
    const sub = rowFamily(withSubgroups.ctx, 'logprob', LOGPROB_SHADER.source, 'logprob.wgsl').source;
    const wg = rowFamily(fallback.ctx, 'logprob', LOGPROB_SHADER.source, 'logprob.wgsl').source;
    expect(wg).not.toMatch(/enable subgroups|subgroupShuffleXor/);
    if (hasSubgroups) {
      expect(sub.startsWith('enable subgroups;\n')).toBe(true);
      expect(sub).toContain('subgroupShuffleXor');
    } else expect(sub).toBe(wg);
  });
});

describe('subgroups of a 64-thread workgroup are aligned runs of consecutive local invocation indices', () => {
  it('holds on the test device (block row-lanes-subgroup relies on it)', async () => {
    const ctx = withSubgroups.ctx;
    if (rowReductionOf(ctx) !== 'subgroups') return; // nothing relies on it without the feature
    const code = `enable subgroups;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn probe(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) sid: u32,
         @builtin(subgroup_size) size: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let at = (wid.x * 64u + lid) * 3u;
  out[at] = sid;
  out[at + 1u] = size;
  out[at + 2u] = subgroupAdd(1u);
}`;
    const out = ctx.tensor<'u32'>([8 * 64 * 3], { dtype: 'u32' });
    const module = ctx.device.createShaderModule({ code });
    const pipeline = ctx.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'probe' } });
    const encoder = ctx.device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(
      0,
      ctx.device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [{ binding: 0, resource: out.binding }],
      }),
    );
    pass.dispatchWorkgroups(8);
    pass.end();
    ctx.device.queue.submit([encoder.finish()]);
    const got = await ctx.read(out);
    out.destroy();
    const size = got[1];
    console.log(`subgroup size ${size}`);
    expect(size).toBeGreaterThanOrEqual(4);
    for (let t = 0; t < 8 * 64; t++) {
      const lid = t % 64;
      expect(got[t * 3 + 1], `thread ${t}: subgroup size`).toBe(size);
      expect(got[t * 3], `thread ${t}: subgroup_invocation_id`).toBe(lid % size);
      expect(got[t * 3 + 2], `thread ${t}: active invocations`).toBe(Math.min(size, 64));
    }
  });
});

describe('at awkward row lengths both variants match the CPU twins', () => {
  const cases = awkwardCases();
  describe('default device (subgroups where the adapter has them)', () => itEachCaseMatchesTwin(withSubgroups, cases));
  describe('device without subgroups (workgroup memory)', () => itEachCaseMatchesTwin(fallback, cases));
});

describe('every case of the row families matches its twin on the device without subgroups', () => {
  // The default device runs these in kernels.test.ts and head.test.ts.
  itEachCaseMatchesTwin(
    fallback,
    kernelCases().filter((c) => ROW_REDUCTION_FAMILIES.includes(c.family)),
  );
});
