// The roofline of a profile (src/gpu/profiler.ts): the adapter's measured copy bandwidth (an elementwise copy of a
// large buffer, read + write) and arithmetic peak (peak.ts), and per kernel of a phase its calls, time, bytes and
// FLOPs per step with each rate as a fraction of those two ceilings. `npm run profile` and the bench's real-size
// section print these tables; on a CPU adapter they still rank the kernels, on a GPU they are the map of what to fuse.

import type { GpuContext, KernelProfile, PhaseProfile } from '../gpu';
import { copy } from '../kernels/elementwise';
import { median } from './measure';
import { measurePeak } from './peak';

/** The adapter's two ceilings. */
export interface Roof {
  /** Copy bandwidth, bytes read + written per second, in GB/s. */
  gbps: number;
  /** Arithmetic peak, GFLOP/s (peak.ts). */
  gflops: number;
}

/** Median GB/s of an elementwise copy of `elements` f32 (2^24 on a GPU, 2^22 on a CPU adapter), 5 timed copies. */
export async function measureBandwidth(ctx: GpuContext, elements?: number): Promise<number> {
  const n = elements ?? (ctx.report.isFallbackAdapter ? 1 << 22 : 1 << 24);
  const a = ctx.tensor([n], { label: 'bandwidth.src' });
  const b = ctx.tensor([n], { label: 'bandwidth.dst' });
  try {
    const warm = ctx.recorder('bench.bandwidth.warmup');
    copy(warm, b, a);
    warm.submit();
    await ctx.flush();
    const reps = 5;
    const rec = ctx.recorder('bench.bandwidth', { profile: true });
    for (let i = 0; i < reps; i++) copy(rec, i % 2 ? a : b, i % 2 ? b : a);
    rec.submit();
    await ctx.flush();
    const t = await rec.timings();
    // Timestamps: one per copy; wall clock: one for the five.
    const ms = t.length === reps ? median(t.map((x) => x.ms)) : t[0].ms / reps;
    return (2 * n * 4) / (ms / 1000) / 1e9;
  } finally {
    a.destroy();
    b.destroy();
  }
}

/** Both ceilings of the adapter. */
export async function measureRoof(ctx: GpuContext): Promise<Roof> {
  const gbps = await measureBandwidth(ctx);
  const { gflops } = await measurePeak(ctx, 3);
  return { gbps, gflops };
}

const num = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : '-');
const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(x < 0.01 ? 2 : 1)}%` : '-');

/**
 * Lines of one phase's table: its kernels ranked by time (by bytes where there are no timestamps), the top `top`,
 * each per step (`steps`: the phase's steps counted, e.g. decode token steps, or 1 for the whole phase), with the roofline columns.
 */
export function phaseTable(
  phase: PhaseProfile,
  kernels: readonly KernelProfile[],
  roof: Roof | null,
  opts: { steps: number; stepName: string; top?: number },
): string[] {
  const mine = kernels.filter((k) => k.phase === phase.phase);
  const timed = Number.isFinite(phase.gpuMs);
  const per = (x: number) => x / opts.steps;
  const ranked = [...mine].sort((a, b) => (timed ? b.ms - a.ms : b.bytes - a.bytes));
  const totalMs = timed ? phase.gpuMs : phase.wallMs;
  const bytes = mine.reduce((s, k) => s + k.bytes, 0);
  const flops = mine.reduce((s, k) => s + k.flops, 0);
  const lines = [
    `${phase.phase}: per ${opts.stepName}: ${num(per(phase.dispatches), 1)} dispatches, ${num(per(phase.submits), 2)} submits, ${num(per(totalMs), 2)} ms ${timed ? 'GPU (timestamps)' : 'wall (no timestamps)'}, ${num(per(bytes) / 1e6, 2)} MB, ${num(per(flops) / 1e9, 3)} GFLOP`,
    `  ${'kernel'.padEnd(44)} ${'calls'.padStart(7)} ${'ms'.padStart(9)} ${'share'.padStart(6)} ${'MB'.padStart(9)} ${'GFLOP'.padStart(8)} ${'GB/s'.padStart(7)} ${'GFLOP/s'.padStart(8)} ${'%BW'.padStart(6)} ${'%peak'.padStart(6)}`,
  ];
  for (const k of ranked.slice(0, opts.top ?? 10)) {
    const s = k.ms / 1000;
    const gbps = timed && s > 0 ? k.bytes / s / 1e9 : Number.NaN;
    const gflops = timed && s > 0 ? k.flops / s / 1e9 : Number.NaN;
    lines.push(
      `  ${k.kernel.padEnd(44)} ${num(per(k.calls), 1).padStart(7)} ${num(per(k.ms), 3).padStart(9)} ${(timed ? pct(k.ms / phase.gpuMs) : '-').padStart(6)} ${num(per(k.bytes) / 1e6, 2).padStart(9)} ${num(per(k.flops) / 1e9, 3).padStart(8)} ${num(gbps, 2).padStart(7)} ${num(gflops, 2).padStart(8)} ${(roof ? pct(gbps / roof.gbps) : '-').padStart(6)} ${(roof ? pct(gflops / roof.gflops) : '-').padStart(6)}`,
    );
  }
  return lines;
}
