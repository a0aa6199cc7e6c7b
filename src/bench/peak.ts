// The adapter's measured arithmetic peak: a register-only multiply-add kernel (shaders/peak.wgsl) sized until one
// launch takes long enough to time, then timed like any kernel. The benchmark states matmul throughput as a
// fraction of it. A lower bound of the hardware's peak (what WGSL through this driver reaches), not a spec sheet.

import raw from '../../shaders/peak.wgsl?raw';
import { declareShader, grid, uniforms, type Dispatch, type GpuContext } from '../gpu';
import { dispatchSamples, median, type TimingMethod } from './measure';

const WG = 64;
const ITERS = 256;
const FLOP_PER_INVOCATION = ITERS * 8 * 4 * 2;

const PARAMS = uniforms('Params', { iters: 'u32', scale: 'f32' });
export const PEAK_SHADER = declareShader('peak.wgsl', raw, { uniforms: [PARAMS] });

export interface PeakResult {
  gflops: number;
  ms: number;
  method: TimingMethod;
  /** Invocations in the timed launch. */
  invocations: number;
}

function peakDispatch(ctx: GpuContext, out: Dispatch['bindings'][number], wg: [number, number]): Dispatch {
  return {
    family: ctx.family('peak', PEAK_SHADER.source),
    entry: 'peak_fma',
    constants: { WG },
    params: PARAMS.pack({ iters: ITERS, scale: 1 }),
    bindings: [out],
    workgroups: wg,
  };
}

/** Doubles the launch until it takes at least `targetMs` (or hits 2^20 workgroups), then times it `reps` times. */
export async function measurePeak(ctx: GpuContext, reps: number, targetMs = 50): Promise<PeakResult> {
  let workgroups = 64;
  const maxWorkgroups = 1 << 20;
  for (;;) {
    const wg = grid(workgroups, ctx.device.limits.maxComputeWorkgroupsPerDimension);
    const out = ctx.tensor([wg[0] * wg[1] * WG], { label: 'peak.out' });
    try {
      const d = peakDispatch(ctx, out, wg);
      const probe = await dispatchSamples(ctx, d, 1, 1);
      const probeMs = median(probe.samples);
      if (probeMs >= targetMs || workgroups >= maxWorkgroups) {
        const { samples, method } = await dispatchSamples(ctx, d, reps, 1);
        const ms = median(samples);
        const invocations = wg[0] * wg[1] * WG;
        return { gflops: (invocations * FLOP_PER_INVOCATION) / (ms / 1000) / 1e9, ms, method, invocations };
      }
      // Jump most of the way when the probe is far too short (fast GPUs), else double.
      workgroups = Math.min(
        maxWorkgroups,
        workgroups * Math.max(2, Math.min(64, Math.floor(targetMs / Math.max(probeMs, 1e-3)))),
      );
    } finally {
      out.destroy();
    }
  }
}
