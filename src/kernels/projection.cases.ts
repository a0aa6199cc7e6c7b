// GPU-vs-twin cases of the fused decode projections (shaders/projection.wgsl): q/k/v in one dispatch and gate/up
// with SwiGLU in one, with and without the folded RMSNorm and Qwen2's biases (the gain and biases bound as views of
// one buffer, as GpuModel's per-layer arena binds them), f32 and half weights, at awkward shapes: one row, ragged
// rows over a workgroup's 32, outputs of unequal widths whose tiles straddle a workgroup's 32 columns, a long K; in
// both orders along K (opts.order: 'k4' as matmul_vec4 sums, 'k1' as matmul_blocked does). With a LoRA epilogue
// (ranks 4 and 8, xa and B each views of one buffer as a layer's xa rows and the adapters' arena lay them out), in
// both orders along the rank; the pair of products of one input and the accumulating o/down product with its delta.
// The twin runs on the weights rounded as the GPU stores them, so half weights share the f32 tolerance.

import { Tensor, type GpuContext } from '../gpu';
import { compareArrays } from '../reference/compare';
import {
  projectionAddLora as addLoraTwin,
  projectionGateUp as gateUpTwin,
  projectionPair as pairTwin,
  projectionQkv as qkvTwin,
  type LoraEpilogue,
} from '../reference/projection';
import { roundToWeightDtype, toHalfBits, type WeightDtype } from '../core/half';
import { host, type HostTensor } from '../core/host-tensor';
import { Rng } from '../core/random';
import { halfCodec } from './half-operand';
import { projectionAddLora, projectionGateUp, projectionPair, projectionQkv, type GpuLoraEpilogue } from './projection';
import type { MatmulSumOrder } from './matmul';
import { randomHost, seedOf, type CaseResult, type KernelCase } from './verify';

/** Rows M, width K, and the widths of q, k, v (gate/up use the first). */
const SHAPES = [
  { M: 1, K: 4, N: [4, 4, 4] },
  { M: 3, K: 20, N: [12, 4, 8] },
  { M: 5, K: 36, N: [40, 8, 8] },
  { M: 37, K: 8, N: [68, 36, 36] },
  { M: 2, K: 600, N: [24, 8, 8] },
];

type Shape = (typeof SHAPES)[number];

function uploadWeight(ctx: GpuContext, w: HostTensor<Float32Array>, dtype: WeightDtype, label: string) {
  if (dtype === 'f32') return { t: ctx.fromArray(w.data, w.shape, { label }), rounded: w };
  const t = ctx.fromArray<typeof dtype>(toHalfBits(w.data, dtype), w.shape, { dtype, label });
  return { t, rounded: host(roundToWeightDtype(w.data, dtype), w.shape) };
}

/** The gain and biases laid out as in an arena: each at an offset aligned for binding, views of one tensor. */
function vectorViews(ctx: GpuContext, parts: HostTensor<Float32Array>[], label: string) {
  const align = Math.max(1, ctx.device.limits.minStorageBufferOffsetAlignment / 4);
  const starts: number[] = [];
  let n = 0;
  for (const p of parts) {
    n = Math.ceil(n / align) * align;
    starts.push(n);
    n += p.data.length;
  }
  const data = new Float32Array(n);
  parts.forEach((p, i) => data.set(p.data, starts[i]));
  const all = ctx.fromArray(data, [n], { label });
  const views = parts.map(
    (p, i) => new Tensor(all.buffer, p.shape, 'f32', `${label}:${i}`, all.byteOffset + 4 * starts[i], false),
  );
  return { all, views };
}

/** A LoRA epilogue of the given rank for M rows and outputs of widths N: host values and their GPU views. */
function loraOperands(
  ctx: GpuContext,
  rng: Rng,
  M: number,
  N: readonly number[],
  rank: number,
  order: MatmulSumOrder,
  label: string,
) {
  const xa = N.map(() => randomHost(rng, [M, rank]));
  const B = N.map((n) => randomHost(rng, [n, rank]));
  const scale = 2 / rank;
  const gXa = vectorViews(ctx, xa, `${label}:xa`);
  const gB = vectorViews(ctx, B, `${label}:B`);
  const host: LoraEpilogue = { xa, B, scale };
  const gpu: GpuLoraEpilogue = { xa: gXa.views, B: gB.views, scale, order };
  return { host, gpu, buffers: [gXa.all, gB.all] };
}

/** The case's result: each output against the twin's, named by the weights' codec where they are half. */
function finish(
  ctx: GpuContext,
  name: string,
  got: Float32Array[],
  want: HostTensor[],
  K: number,
  ms: number,
  dtype: WeightDtype = 'f32',
): CaseResult {
  let pass = true;
  let maxAbsError = 0;
  const parts = want.map((w, i) => {
    const c = compareArrays(got[i], w.data, { atol: 2e-5 * Math.sqrt(K), rtol: 1e-5 });
    pass &&= c.pass;
    maxAbsError = Math.max(maxAbsError, c.maxAbsError);
    return want.length > 1 ? `out${i}: ${c.summary}` : c.summary;
  });
  const codec = dtype === 'f32' ? 'f32' : halfCodec(dtype, ctx.device);
  return { name, family: 'projection', pass, maxAbsError, ms, summary: `${codec}: ${parts.join('; ')}` };
}

function qkvCase(
  s: Shape,
  norm: boolean,
  bias: boolean,
  dtype: WeightDtype,
  order: MatmulSumOrder,
  rank = 0,
  loraOrder: MatmulSumOrder = order,
  bothForms = false,
): KernelCase {
  const name = `projectionQkv M=${s.M} K=${s.K} N=${s.N.join('/')}${norm ? ' norm' : ''}${bias ? ' bias' : ''} ${dtype} ${order}${rank ? ` lora r=${rank} ${loraOrder}` : ''}${bothForms ? ' one K loop = three' : ''}`;
  return {
    name,
    family: 'projection',
    async run(ctx): Promise<CaseResult> {
      const rng = new Rng(seedOf(name));
      const x = randomHost(rng, [s.M, s.K], 2);
      const ws = s.N.map((n) => randomHost(rng, [n, s.K]));
      const gain = randomHost(rng, [s.K]);
      const biases = s.N.map((n) => randomHost(rng, [n]));
      const ys = s.N.map((n) => host(new Float32Array(s.M * n), [s.M, n]));
      const gX = ctx.fromArray(x.data, x.shape, { label: `${name}:x` });
      const gW = ws.map((w, i) => uploadWeight(ctx, w, dtype, `${name}:w${i}`));
      const vec = vectorViews(ctx, [...(norm ? [gain] : []), ...(bias ? biases : [])], `${name}:vectors`);
      const gY = ys.map((y, i) => ctx.tensor(y.shape, { label: `${name}:y${i}` }));
      const lora = rank ? loraOperands(ctx, rng, s.M, s.N, rank, loraOrder, name) : null;
      const t0 = performance.now();
      const rec = ctx.recorder(name);
      const three = <T>(a: T[]) => a as unknown as [T, T, T];
      // bothForms: the one-loop form (ONE_K_LOOP) into gY, the three-loop form into gY3, to be equal bit for bit.
      const gY3 = bothForms ? ys.map((y, i) => ctx.tensor(y.shape, { label: `${name}:y3_${i}` })) : [];
      for (const [out, oneKLoop] of bothForms
        ? ([
            [gY, true],
            [gY3, false],
          ] as const)
        : ([[gY, undefined]] as const))
        projectionQkv(rec, three(out), gX, three(gW.map((w) => w.t)), {
          norm: norm ? { gain: vec.views[0], eps: 1e-5 } : null,
          biases: bias ? three(vec.views.slice(norm ? 1 : 0)) : null,
          order,
          lora: lora?.gpu,
          oneKLoop,
        });
      rec.submit();
      const got = (await ctx.readMany(gY)) as Float32Array[];
      const gotThree = (await ctx.readMany(gY3)) as Float32Array[];
      const ms = performance.now() - t0;
      for (const t of [gX, ...gW.map((w) => w.t), vec.all, ...gY, ...gY3, ...(lora?.buffers ?? [])]) t.destroy();
      const differing = gotThree.filter((y, i) => !Buffer.from(y.buffer).equals(Buffer.from(got[i].buffer))).length;
      qkvTwin(three(ys), x, three(gW.map((w) => w.rounded)), {
        norm: norm ? { gain, eps: 1e-5 } : null,
        biases: bias ? three(biases) : null,
        lora: lora?.host,
      });
      const result = finish(ctx, name, got, ys, s.K, ms, dtype);
      if (!differing) return result;
      return { ...result, pass: false, summary: `${result.summary}; ${differing} output(s) differ between the forms` };
    },
  };
}

function gateUpCase(
  s: Shape,
  norm: boolean,
  dtype: WeightDtype,
  order: MatmulSumOrder,
  rank = 0,
  loraOrder: MatmulSumOrder = order,
): KernelCase {
  const F = s.N[0];
  const name = `projectionGateUp M=${s.M} K=${s.K} F=${F}${norm ? ' norm' : ''} ${dtype} ${order}${rank ? ` lora r=${rank} ${loraOrder}` : ''}`;
  return {
    name,
    family: 'projection',
    async run(ctx): Promise<CaseResult> {
      const rng = new Rng(seedOf(name));
      const x = randomHost(rng, [s.M, s.K], 2);
      const wg = randomHost(rng, [F, s.K]);
      const wu = randomHost(rng, [F, s.K]);
      const gain = randomHost(rng, [s.K]);
      const act = host(new Float32Array(s.M * F), [s.M, F]);
      const gX = ctx.fromArray(x.data, x.shape, { label: `${name}:x` });
      const gG = uploadWeight(ctx, wg, dtype, `${name}:wg`);
      const gU = uploadWeight(ctx, wu, dtype, `${name}:wu`);
      const gGain = ctx.fromArray(gain.data, gain.shape, { label: `${name}:gain` });
      const gAct = ctx.tensor(act.shape, { label: `${name}:act` });
      const lora = rank ? loraOperands(ctx, rng, s.M, [F, F], rank, loraOrder, name) : null;
      const t0 = performance.now();
      const rec = ctx.recorder(name);
      projectionGateUp(rec, gAct, gX, gG.t, gU.t, {
        norm: norm ? { gain: gGain, eps: 1e-6 } : null,
        order,
        lora: lora?.gpu,
      });
      rec.submit();
      const got = (await ctx.read(gAct)) as Float32Array;
      const ms = performance.now() - t0;
      for (const t of [gX, gG.t, gU.t, gGain, gAct, ...(lora?.buffers ?? [])]) t.destroy();
      gateUpTwin(act, x, gG.rounded, gU.rounded, { norm: norm ? { gain, eps: 1e-6 } : null, lora: lora?.host });
      return finish(ctx, name, [got], [act], s.K, ms, dtype);
    },
  };
}

/** The pair of products of one input (a LoRA layer's gate and up x A^T), the outputs views of one buffer. */
function pairCase(s: Shape, norm: boolean, order: MatmulSumOrder): KernelCase {
  const N = s.N[1];
  const name = `projectionPair M=${s.M} K=${s.K} N=${N}${norm ? ' norm' : ''} ${order}`;
  return {
    name,
    family: 'projection',
    async run(ctx): Promise<CaseResult> {
      const rng = new Rng(seedOf(name));
      const x = randomHost(rng, [s.M, s.K], 2);
      const ws = [randomHost(rng, [N, s.K]), randomHost(rng, [N, s.K])];
      const gain = randomHost(rng, [s.K]);
      const ys = ws.map(() => host(new Float32Array(s.M * N), [s.M, N]));
      const gX = ctx.fromArray(x.data, x.shape, { label: `${name}:x` });
      const gW = ws.map((w, i) => ctx.fromArray(w.data, w.shape, { label: `${name}:w${i}` }));
      const gGain = ctx.fromArray(gain.data, gain.shape, { label: `${name}:gain` });
      const out = vectorViews(ctx, ys, `${name}:ys`);
      const t0 = performance.now();
      const rec = ctx.recorder(name);
      projectionPair(rec, [out.views[0], out.views[1]], gX, [gW[0], gW[1]], {
        norm: norm ? { gain: gGain, eps: 1e-5 } : null,
        order,
      });
      rec.submit();
      const got = (await ctx.readMany(out.views)) as Float32Array[];
      const ms = performance.now() - t0;
      for (const t of [gX, ...gW, gGain, out.all]) t.destroy();
      pairTwin([ys[0], ys[1]], x, [ws[0], ws[1]], { norm: norm ? { gain, eps: 1e-5 } : null });
      return finish(ctx, name, got, ys, s.K, ms);
    },
  };
}

/** y += x W^T + s xa B^T: an adapted o or down product accumulating into the residual. */
function addLoraCase(
  s: Shape,
  dtype: WeightDtype,
  order: MatmulSumOrder,
  rank: number,
  loraOrder: MatmulSumOrder,
): KernelCase {
  const N = s.N[0];
  const name = `projectionAddLora M=${s.M} K=${s.K} N=${N} ${dtype} ${order} lora r=${rank} ${loraOrder}`;
  return {
    name,
    family: 'projection',
    async run(ctx): Promise<CaseResult> {
      const rng = new Rng(seedOf(name));
      const x = randomHost(rng, [s.M, s.K], 2);
      const w = randomHost(rng, [N, s.K]);
      const y = randomHost(rng, [s.M, N], 3);
      const gX = ctx.fromArray(x.data, x.shape, { label: `${name}:x` });
      const gW = uploadWeight(ctx, w, dtype, `${name}:w`);
      const gY = ctx.fromArray(y.data, y.shape, { label: `${name}:y` });
      const lora = loraOperands(ctx, rng, s.M, [N], rank, loraOrder, name);
      const t0 = performance.now();
      const rec = ctx.recorder(name);
      projectionAddLora(rec, gY, gX, gW.t, { order, lora: lora.gpu });
      rec.submit();
      const got = (await ctx.read(gY)) as Float32Array;
      const ms = performance.now() - t0;
      for (const t of [gX, gW.t, gY, ...lora.buffers]) t.destroy();
      addLoraTwin(y, x, gW.rounded, { lora: lora.host });
      return finish(ctx, name, [got], [y], s.K, ms, dtype);
    },
  };
}

export function projectionCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  for (const s of SHAPES) {
    for (const [norm, bias] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const)
      cases.push(qkvCase(s, norm, bias, 'f32', 'k4'));
    cases.push(gateUpCase(s, false, 'f32', 'k4'), gateUpCase(s, true, 'f32', 'k4'));
    cases.push(qkvCase(s, true, true, 'f32', 'k1'), gateUpCase(s, true, 'f32', 'k1'));
  }
  // Half weights (two rows share no word here: K divides by 4), with the norm and biases.
  for (const dtype of ['bf16', 'f16'] as const)
    for (const s of [SHAPES[1], SHAPES[3]])
      for (const order of ['k4', 'k1'] as const)
        cases.push(qkvCase(s, true, true, dtype, order), gateUpCase(s, true, dtype, order));
  // The LoRA epilogue at ranks 4 and 8, the rank's order apart from K's; the pair; the accumulating product.
  for (const s of SHAPES)
    for (const [rank, order, loraOrder] of [
      [4, 'k4', 'k4'],
      [8, 'k1', 'k4'],
      [8, 'k4', 'k1'],
    ] as const) {
      cases.push(
        qkvCase(s, true, true, 'f32', order, rank, loraOrder),
        gateUpCase(s, true, 'f32', order, rank, loraOrder),
      );
      cases.push(addLoraCase(s, 'f32', order, rank, loraOrder));
    }
  for (const s of SHAPES) cases.push(pairCase(s, true, 'k4'), pairCase(s, false, 'k1'));
  // The q/k/v product's two forms (one K loop, or one per weight) agree bit for bit, plain and with the epilogue.
  for (const s of [SHAPES[3], SHAPES[4]])
    cases.push(
      qkvCase(s, true, true, 'f32', 'k4', 0, 'k4', true),
      qkvCase(s, true, true, 'f32', 'k1', 8, 'k4', true),
      qkvCase(s, false, false, 'bf16', 'k4', 4, 'k1', true),
    );
  for (const dtype of ['bf16', 'f16'] as const) {
    cases.push(
      qkvCase(SHAPES[3], true, false, dtype, 'k4', 4, 'k4'),
      gateUpCase(SHAPES[3], true, dtype, 'k1', 4, 'k1'),
    );
    cases.push(addLoraCase(SHAPES[1], dtype, 'k4', 4, 'k1'));
  }
  return cases;
}
