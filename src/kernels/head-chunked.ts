// The LM head fused with what the RL losses need of it, over chunks of rows so that no (rows, V) logits tensor
// of a whole batch ever exists: for each chunk of Rc rows, logits = h W^T go into an (Rc, V) scratch, the
// log-prob of the target, the entropy and (with a reference) the reference's log-prob and the exact KL are taken
// from it (logprob.ts, kl.ts), and the backward recomputes the chunk's logits, forms its dLogits and pushes it
// through the head at once: dH = dLogits W, dW += dLogits^T h. The scratch is bounded by a byte budget (64 MiB
// by default) whatever the batch: the row chunk shrinks as the vocabulary grows. Results equal the unchunked
// composition row for row (each row's statistics are computed by the same kernels in the same order); the CPU twin
// is src/reference/head.ts. Rows are copied into chunk-aligned scratch, so a chunk may start at any row.

import type { GpuContext, Recorder, Tensor } from '../gpu';
import { klExactBackward, klExactForward } from './kl';
import { logprobBackward, logprobForward } from './logprob';
import { matmul } from './matmul';

/** Default bytes of (rows, V) scratch a head may hold at once. */
export const HEAD_SCRATCH_BYTES = 64 * 2 ** 20;

/** What a chunked head is sized for. */
export interface ChunkedHeadShape {
  /** Hidden width C. */
  dModel: number;
  /** Vocabulary V (rows of the head weight). */
  vocabSize: number;
  /** Most rows of one call (the chunk never exceeds it). */
  maxRows: number;
  /** A reference head runs in lockstep (reference log-prob, exact KL and its gradient). */
  reference: boolean;
  /** Bytes of (rows, V) scratch at most (default HEAD_SCRATCH_BYTES); at least one row is always allowed. */
  budgetBytes?: number;
}

/** The (rows, V) buffers a head holds: logits and dLogits, and the reference's logits when there is one. */
export function headLogitsBuffers(reference: boolean): number {
  return reference ? 3 : 2;
}

/** Rows per chunk for a shape: as many as the budget allows, at most maxRows, at least 1. */
export function headChunkRows(shape: ChunkedHeadShape): number {
  const budget = shape.budgetBytes ?? HEAD_SCRATCH_BYTES;
  const perRow = 4 * shape.vocabSize * headLogitsBuffers(shape.reference);
  return Math.max(1, Math.min(shape.maxRows, Math.floor(budget / perRow)));
}

/** Bytes a ChunkedHead of this shape allocates (the memory plan counts them). */
export function chunkedHeadBytes(shape: ChunkedHeadShape): number {
  const Rc = headChunkRows(shape);
  const rowsV = Rc * shape.vocabSize * headLogitsBuffers(shape.reference);
  // h, dh (and the reference's h): (Rc, C); targets and nine per-row planes: (Rc) each.
  const rowsC = Rc * shape.dModel * (shape.reference ? 3 : 2);
  return 4 * (rowsV + rowsC + 10 * Rc);
}

/** One model's head: its hidden states (rows, C) and its weight (V, C). */
export interface HeadSide {
  h: Tensor;
  W: Tensor;
}

export interface HeadForwardArgs {
  policy: HeadSide;
  /** (rows) u32 target ids. */
  targets: Tensor<'u32'>;
  /** (rows) overwritten: log softmax(logits / tau)[target]. */
  logp: Tensor;
  /** (rows) overwritten: the entropy of softmax(logits / tau). */
  entropy: Tensor;
  /** (rows) overwritten when given: sum_v p_v^2 of softmax(logits / tau), the optimal token baseline's input. */
  sumPiSquared?: Tensor;
  /** The reference head: its log-prob of the target (rows), and the exact KL(pi || pi_ref) per row when kl is given. */
  reference?: HeadSide & { logp: Tensor; kl?: Tensor };
  temperature: number;
}

export interface HeadBackwardArgs {
  policy: HeadSide;
  targets: Tensor<'u32'>;
  /** (rows) upstream gradients of logp and entropy. */
  dLogp: Tensor;
  dEntropy: Tensor;
  /** The reference head and the upstream gradient of the exact KL (rows); the reference gets no gradient. */
  reference?: HeadSide & { dKl: Tensor };
  /** (rows, C) overwritten: the gradient of the policy's hidden states. */
  dH: Tensor;
  /** (V, C) added into: the gradient of the head weight; null when the head is frozen. */
  dW: Tensor | null;
  temperature: number;
}

/** A head's chunk scratch, allocated once for a shape and reused by every call. */
export class ChunkedHead {
  readonly rowsPerChunk: number;
  private readonly h: Tensor;
  private readonly dh: Tensor;
  private readonly refH: Tensor | null;
  private readonly targets: Tensor<'u32'>;
  /** (Rc) each, separate buffers (a kernel binding must start on the device's storage alignment): logp, entropy,
   * reference logp, reference entropy, kl, dLogp, dEntropy, dKl, sum of squared probabilities. */
  private readonly planes: Tensor[];
  private readonly logits: Tensor;
  private readonly refLogits: Tensor | null;
  private readonly dLogits: Tensor;

  constructor(
    ctx: GpuContext,
    readonly shape: ChunkedHeadShape,
  ) {
    const Rc = headChunkRows(shape);
    const { dModel: C, vocabSize: V } = shape;
    this.rowsPerChunk = Rc;
    const f = (s: number[], label: string) => ctx.tensor(s, { label: `head.${label}` });
    this.h = f([Rc, C], 'h');
    this.dh = f([Rc, C], 'dh');
    this.refH = shape.reference ? f([Rc, C], 'ref_h') : null;
    this.targets = ctx.tensor<'u32'>([Rc], { dtype: 'u32', label: 'head.targets' });
    this.planes = ['logp', 'entropy', 'ref_logp', 'ref_entropy', 'kl', 'dLogp', 'dEntropy', 'dKl', 'sum_pi_sq'].map(
      (p) => f([Rc], p),
    );
    this.logits = f([Rc, V], 'logits');
    this.refLogits = shape.reference ? f([Rc, V], 'ref_logits') : null;
    this.dLogits = f([Rc, V], 'dLogits');
  }

  private plane(p: number, n: number): Tensor {
    return this.planes[p].view(0, [n]);
  }

  /** The chunks of `rows` rows: [first row, rows in the chunk]. */
  private chunks(rows: number): [number, number][] {
    const out: [number, number][] = [];
    for (let r0 = 0; r0 < rows; r0 += this.rowsPerChunk) out.push([r0, Math.min(this.rowsPerChunk, rows - r0)]);
    return out;
  }

  private checkRows(kernel: string, side: HeadSide, rowTensors: [Tensor | undefined, string][]): number {
    const { dModel: C, vocabSize: V } = this.shape;
    if (side.h.size % C !== 0) throw new Error(`${kernel}: h ${side.h.describe()} must be (rows, ${C})`);
    const rows = side.h.size / C;
    if (rows > this.shape.maxRows)
      throw new Error(`${kernel}: ${rows} rows, more than the ${this.shape.maxRows} this head was sized for`);
    if (side.W.size !== V * C) throw new Error(`${kernel}: W ${side.W.describe()} must be (${V}, ${C})`);
    for (const [t, name] of rowTensors) {
      if (t && t.size !== rows) throw new Error(`${kernel}: ${name} ${t.describe()} must have ${rows} elements`);
    }
    return rows;
  }

  private checkReference(kernel: string, rows: number, ref: HeadSide | undefined): void {
    if (!ref) return;
    if (!this.refH) throw new Error(`${kernel}: this head was sized without a reference`);
    if (ref.h.size !== rows * this.shape.dModel)
      throw new Error(`${kernel}: reference h ${ref.h.describe()} must match the policy's ${rows} rows`);
    if (ref.W.size !== this.shape.vocabSize * this.shape.dModel)
      throw new Error(`${kernel}: reference W ${ref.W.describe()} has the wrong size`);
  }

  /** logits of a chunk: (n, V) = h[r0 .. r0+n) W^T, the rows copied into the chunk's scratch first. */
  private chunkLogits(rec: Recorder, side: HeadSide, hScratch: Tensor, out: Tensor, r0: number, n: number): Tensor {
    const C = this.shape.dModel;
    const V = this.shape.vocabSize;
    const h = hScratch.view(0, [n, C]);
    rec.copy(h, side.h.view(r0 * C, [n * C]));
    const logits = out.view(0, [n, V]);
    matmul(rec, logits, h, side.W.reshape([V, C]), { transB: true });
    return logits;
  }

  /** Forward: per-row log-prob, entropy (and sum_v p_v^2 when asked), and with a reference its log-prob and the exact KL. */
  forward(rec: Recorder, a: HeadForwardArgs): void {
    const kernel = 'ChunkedHead.forward';
    const ref = a.reference;
    const rows = this.checkRows(kernel, a.policy, [
      [a.targets, 'targets'],
      [a.logp, 'logp'],
      [a.entropy, 'entropy'],
      [a.sumPiSquared, 'sumPiSquared'],
      [ref?.logp, 'reference logp'],
      [ref?.kl, 'kl'],
    ]);
    this.checkReference(kernel, rows, ref);
    const tau = { temperature: a.temperature };
    for (const [r0, n] of this.chunks(rows)) {
      const targets = this.targets.view(0, [n]);
      rec.copy(targets, a.targets.view(r0, [n]));
      const logits = this.chunkLogits(rec, a.policy, this.h, this.logits, r0, n);
      const sumPiSq = a.sumPiSquared ? this.plane(8, n) : undefined;
      logprobForward(rec, this.plane(0, n), this.plane(1, n), logits, targets, tau, sumPiSq);
      rec.copy(a.logp.view(r0, [n]), this.plane(0, n));
      rec.copy(a.entropy.view(r0, [n]), this.plane(1, n));
      if (a.sumPiSquared && sumPiSq) rec.copy(a.sumPiSquared.view(r0, [n]), sumPiSq);
      if (!ref || !this.refH || !this.refLogits) continue;
      const refLogits = this.chunkLogits(rec, ref, this.refH, this.refLogits, r0, n);
      logprobForward(rec, this.plane(2, n), this.plane(3, n), refLogits, targets, tau);
      rec.copy(ref.logp.view(r0, [n]), this.plane(2, n));
      if (ref.kl) {
        klExactForward(rec, this.plane(4, n), logits, refLogits, tau);
        rec.copy(ref.kl.view(r0, [n]), this.plane(4, n));
      }
    }
  }

  /** Backward: dH (overwritten) and dW (added into) from the upstream gradients of logp, entropy and the KL. */
  backward(rec: Recorder, a: HeadBackwardArgs): void {
    const kernel = 'ChunkedHead.backward';
    const ref = a.reference;
    const rows = this.checkRows(kernel, a.policy, [
      [a.targets, 'targets'],
      [a.dLogp, 'dLogp'],
      [a.dEntropy, 'dEntropy'],
      [ref?.dKl, 'dKl'],
    ]);
    this.checkReference(kernel, rows, ref);
    const { dModel: C, vocabSize: V } = this.shape;
    if (a.dH.size !== rows * C) throw new Error(`${kernel}: dH ${a.dH.describe()} must be (${rows}, ${C})`);
    if (a.dW && a.dW.size !== V * C) throw new Error(`${kernel}: dW ${a.dW.describe()} must be (${V}, ${C})`);
    const tau = { temperature: a.temperature };
    for (const [r0, n] of this.chunks(rows)) {
      const targets = this.targets.view(0, [n]);
      rec.copy(targets, a.targets.view(r0, [n]));
      const dLogp = this.plane(5, n);
      const dEnt = this.plane(6, n);
      rec.copy(dLogp, a.dLogp.view(r0, [n]));
      rec.copy(dEnt, a.dEntropy.view(r0, [n]));
      const logits = this.chunkLogits(rec, a.policy, this.h, this.logits, r0, n);
      const dLogits = this.dLogits.view(0, [n, V]);
      logprobBackward(rec, dLogits, dLogp, dEnt, logits, targets, tau);
      if (ref && this.refH && this.refLogits) {
        const dKl = this.plane(7, n);
        rec.copy(dKl, ref.dKl.view(r0, [n]));
        const refLogits = this.chunkLogits(rec, ref, this.refH, this.refLogits, r0, n);
        klExactBackward(rec, dLogits, dKl, logits, refLogits, { ...tau, accumulate: true });
      }
      const dh = this.dh.view(0, [n, C]);
      matmul(rec, dh, dLogits, a.policy.W.reshape([V, C]));
      rec.copy(a.dH.view(r0 * C, [n * C]), dh);
      if (a.dW) matmul(rec, a.dW.reshape([V, C]), dLogits, this.h.view(0, [n, C]), { transA: true, accumulate: true });
    }
  }

  destroy(): void {
    for (const t of [this.h, this.dh, this.refH, this.targets, ...this.planes, this.logits, this.refLogits])
      t?.destroy();
    this.dLogits.destroy();
  }
}

/**
 * A scalar head: out[r] = h[r] . W[0], the first row of a head weight (the critic's V, a reward model's score),
 * a (rows, C) x (C) product with no logits at all.
 * @param out (rows) overwritten.
 * @param h   (rows, C) hidden states.
 * @param W   (V, C) the head weight; only its first row is read.
 */
export function scalarHeadForward(rec: Recorder, out: Tensor, h: Tensor, W: Tensor): void {
  const C = W.shape[W.shape.length - 1];
  if (h.size !== out.size * C)
    throw new Error(`scalarHeadForward: h ${h.describe()} must be (${out.size}, ${C}) for ${out.describe()}`);
  matmul(rec, out.reshape([out.size, 1]), h.reshape([out.size, C]), W.view(0, [1, C]), { transB: true });
}

/**
 * Backward of scalarHeadForward: dH = dOut W[0] (overwritten), dW[0] += dOut^T h (the other rows get nothing).
 * @param dH   (rows, C) overwritten.
 * @param dW   (V, C) added into (first row only); null when the head is frozen.
 * @param dOut (rows) upstream gradient.
 */
export function scalarHeadBackward(
  rec: Recorder,
  dH: Tensor,
  dW: Tensor | null,
  dOut: Tensor,
  h: Tensor,
  W: Tensor,
): void {
  const C = W.shape[W.shape.length - 1];
  const rows = dOut.size;
  if (h.size !== rows * C || dH.size !== rows * C)
    throw new Error(`scalarHeadBackward: h ${h.describe()} and dH ${dH.describe()} must be (${rows}, ${C})`);
  const d = dOut.reshape([rows, 1]);
  matmul(rec, dH.reshape([rows, C]), d, W.view(0, [1, C]));
  if (dW) matmul(rec, dW.view(0, [1, C]), d, h.reshape([rows, C]), { transA: true, accumulate: true });
}
