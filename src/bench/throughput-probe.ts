// A short measurement of an adapter's speed for the step estimate (src/schema/step-estimate.ts): the round trip of one
// small pass, the cost of a pass more in one submit, a training-shaped matmul (1024 rows) and a decode-shaped one
// (64 rows streaming a square weight), each grown until it takes long enough to time by wall clock, median of 5,
// then both timed once more at their sizes and the faster median of each kept: the page probes while it is still
// loading, and a stall of the machine only ever slows a product, so of two medians apart in time the faster is the
// adapter's. The decode-shaped one starts at a 512^2 weight (about 15 ms on SwiftShader), so a stall while a small
// product is timed cannot end the growth early. The bandwidth is the difference of the decode product's time and its
// arithmetic at the training rate, which magnifies a stall: seen in the page before, "64 rows x 128^2 weight 0.0
// GB/s" and a 41 s estimate for a step that took 1 s.
// Well under a second on SwiftShader; run by the worker only once a run has trained (never before the first step)
// and by the estimate's calibration script. Not the autotune (which chooses variants) and not the bench's tables.

import type { GpuContext, Tensor } from '../gpu';
import { Rng, randomArray } from '../core/random';
import { matmul } from '../kernels/matmul';
import { calibrationFor, type Throughput } from '../schema/step-estimate';
import { describeAdapter } from '../schema/adapter-text';

/** A product's wall time long enough that the round trip is a small part of it. */
const LONG_ENOUGH_MS = 15;
const REPS = 5;

/** Measures `ctx`'s adapter: see the file's opening comment. About 10 submits of growing products. */
export async function probeThroughput(ctx: GpuContext): Promise<Throughput> {
  const owned: Tensor[] = [];
  const rng = new Rng(7);
  const tensor = (rows: number, cols: number) => {
    const t = ctx.fromArray(randomArray(rng, rows * cols), [rows, cols], { label: 'probe.in' });
    owned.push(t);
    return t;
  };
  const out = (rows: number, cols: number) => {
    const t = ctx.tensor([rows, cols], { label: 'probe.out' });
    owned.push(t);
    return t;
  };
  /**
   * Median wall milliseconds over REPS (after one that compiles) of `passes` products x W^T of (M,K) by (N,K) in one
   * submit, each reading the previous one's output (so each waits for the one before, as a model's layers do).
   * The median, as the steps it predicts are medians: on a loaded machine the least is the exception.
   */
  const time = async (M: number, N: number, K: number, passes = 1): Promise<number> => {
    const x = tensor(M, K);
    const w = tensor(N, K);
    const y = out(M, N);
    const chained = passes > 1 && N === K ? out(M, N) : null;
    const times: number[] = [];
    for (let r = 0; r <= REPS; r++) {
      const rec = ctx.recorder('probe');
      const t0 = performance.now();
      matmul(rec, y, x, w, { transB: true });
      for (let i = 1; i < passes; i++) {
        const [from, to] = i % 2 === 1 ? [y, chained ?? y] : [chained ?? y, y];
        matmul(rec, to, chained ? from : x, w, { transB: true });
      }
      rec.submit();
      await ctx.flush();
      if (r > 0) times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  };
  /** A square weight grown from `from` until `rows` rows through it take LONG_ENOUGH_MS (at most 4096). */
  const grow = async (rows: number, from: number): Promise<{ n: number; ms: number }> => {
    let n = from;
    let ms = await time(rows, n, n);
    while (ms < LONG_ENOUGH_MS && n < 4096) {
      n *= 2;
      ms = await time(rows, n, n);
    }
    return { n, ms };
  };
  try {
    const one = await time(8, 8, 8);
    const many = await time(8, 8, 8, 65);
    const submitSeconds = one / 1000;
    const dispatchSeconds = Math.max(0, (many - one) / 64) / 1000;
    const grown = { train: await grow(1024, 128), decode: await grow(64, 512) };
    const again = async (rows: number, g: { n: number; ms: number }) => ({
      n: g.n,
      ms: Math.min(g.ms, await time(rows, g.n, g.n)),
    });
    const train = await again(1024, grown.train);
    const decode = await again(64, grown.decode);
    const work = (ms: number) => Math.max(ms - one, ms * 0.1) / 1000;
    const flopsPerSecond = (2 * 1024 * train.n * train.n) / work(train.ms);
    // The decode product reads its (n, n) weight once for 64 rows. Its time beyond its arithmetic at the training
    // rate is the weight's traffic; where the arithmetic explains nearly all of it (a CPU adapter), traffic is not
    // what limits, and the rate is bounded from below by a fifth of its time.
    const decodeSeconds = work(decode.ms);
    const beyondArithmetic = decodeSeconds - (2 * 64 * decode.n * decode.n) / flopsPerSecond;
    const bytesPerSecond = (4 * decode.n * decode.n) / Math.max(beyondArithmetic, 0.2 * decodeSeconds);
    return {
      flopsPerSecond,
      bytesPerSecond,
      submitSeconds,
      dispatchSeconds,
      calibration: calibrationFor(ctx.report.isFallbackAdapter),
      source: `measured on this adapter (${describeAdapter(ctx.report)}): matmul 1024x${train.n}x${train.n} ${(flopsPerSecond / 1e9).toFixed(1)} GFLOP/s, 64 rows x ${decode.n}^2 weight ${(bytesPerSecond / 1e9).toFixed(1)} GB/s, round trip ${one.toFixed(2)} ms`,
    };
  } finally {
    for (const t of owned) t.destroy();
  }
}
