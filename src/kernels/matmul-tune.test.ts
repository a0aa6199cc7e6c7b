// The matmul autotune: it chooses only candidates that match the naive oracle, installs them as matmul()'s default
// on the device, caches per adapter (memory and a store), and every candidate, made the default for every layout,
// gives the whole model's loss and gradients of the CPU twin. Correctness only: no timing is asserted.

import { afterEach, describe, expect, it } from 'vitest';
import { MODEL_PRESETS } from '../schema/model-config';
import { GpuModel } from '../model/gpu-model';
import {
  crossEntropyBackward as ceBackwardTwin,
  crossEntropyForward as ceForwardTwin,
} from '../reference/cross-entropy';
import { modelBackward, modelForward } from '../reference/model';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { host } from '../core/host-tensor';
import { crossEntropyBackward, crossEntropyForward } from './cross-entropy';
import { defaultVariantFor, matmul, matmulTuning, setMatmulTuning, type MatmulVariant } from './matmul';
import {
  TUNE_CANDIDATES,
  TuneStopped,
  autotuneMatmul,
  cachedMatmulTuning,
  clearMatmulTuneCache,
  isLlvmpipe,
  shippedTuning,
  tuneCandidates,
  type TuneMeasurement,
  type TuneStore,
} from './matmul-tune';
import type { GpuContext } from '../gpu';
import { useNodeDevice } from '../testing/test-device';

const gpu = useNodeDevice();
afterEach(() => {
  setMatmulTuning(gpu.ctx.device, null);
  clearMatmulTuneCache();
});

const SHAPES = [
  { M: 24, N: 40, K: 16, transB: true },
  { M: 24, N: 16, K: 40 },
  { M: 40, N: 16, K: 24, transA: true },
];

describe('matmul autotune', () => {
  it('picks, per layout, a candidate that matches the naive oracle, and makes it the default', async () => {
    const r = await autotuneMatmul(gpu.ctx, { shapes: SHAPES, reps: 1 });
    expect(r.fromCache).toBe(false);
    for (const layout of ['NT', 'NN', 'TN'] as const) {
      const v = r.tuning[layout];
      expect(v, layout).toBeDefined();
      expect(tuneCandidates(gpu.ctx)).toContain(v);
      const m = r.measurements.find((x) => x.layout === layout && x.variant === v)!;
      expect(m.rejected).toBeUndefined();
      expect(m.relError).toBeLessThan(1e-4);
    }
    expect(matmulTuning(gpu.ctx.device)).toEqual(r.tuning);
    // matmul() now records the tuned variant (or the one it falls back to at this shape) for an A*B^T product.
    const rec = gpu.ctx.recorder('tuned default');
    const labels: (string | undefined)[] = [];
    const dispatch = rec.dispatch.bind(rec);
    rec.dispatch = (d) => (labels.push(d.label), dispatch(d));
    const a = gpu.ctx.tensor([8, 16]);
    const b = gpu.ctx.tensor([12, 16]);
    const out = gpu.ctx.tensor([8, 12]);
    matmul(rec, out, a, b, { transB: true });
    rec.submit();
    await gpu.ctx.flush();
    expect(labels).toEqual([`matmul.matmul_${defaultVariantFor(r.tuning.NT!, { M: 8, N: 12, K: 16, transB: true })}`]);
    for (const t of [a, b, out]) t.destroy();
  });

  it('reuses the result for the same adapter: from memory, and from a store in a fresh process', async () => {
    const saved = new Map<string, string>();
    const store: TuneStore = { get: (k) => saved.get(k) ?? null, set: (k, v) => void saved.set(k, v) };
    const first = await autotuneMatmul(gpu.ctx, { shapes: SHAPES, reps: 1, store });
    expect(saved.size).toBe(1);
    const again = await autotuneMatmul(gpu.ctx, { shapes: SHAPES, reps: 1 });
    expect(again.fromCache).toBe(true);
    expect(again.tuning).toEqual(first.tuning);
    clearMatmulTuneCache(); // as if the page were reloaded
    setMatmulTuning(gpu.ctx.device, null);
    const reloaded = await autotuneMatmul(gpu.ctx, { shapes: SHAPES, reps: 1, store });
    expect(reloaded.fromCache).toBe(true);
    expect(matmulTuning(gpu.ctx.device)).toEqual(first.tuning);
  });

  it('a stopped tune installs nothing and caches nothing; the next one keeps the layouts measured before the stop', async () => {
    const before = { NT: 'blocked', NN: 'blocked', TN: 'blocked' } as const;
    setMatmulTuning(gpu.ctx.device, before);
    const saved = new Map<string, string>();
    const store: TuneStore = { get: (k) => saved.get(k) ?? null, set: (k, v) => void saved.set(k, v) };
    const partial: TuneMeasurement[] = [];
    // Stops at the first product after the NT layout is measured (the first of NN's checks).
    const stopped = autotuneMatmul(gpu.ctx, {
      shapes: SHAPES,
      reps: 1,
      store,
      partial,
      stop: () => partial.some((m) => m.layout === 'NT'),
    });
    await expect(stopped).rejects.toBeInstanceOf(TuneStopped);
    expect(matmulTuning(gpu.ctx.device)).toEqual(before);
    expect(saved.size).toBe(0);
    expect(await cachedMatmulTuning(gpu.ctx, store)).toBeNull();
    expect(new Set(partial.map((m) => m.layout))).toEqual(new Set(['NT']));
    const measuredNT = [...partial];

    const r = await autotuneMatmul(gpu.ctx, { shapes: SHAPES, reps: 1, store, partial, stop: () => false });
    // NT's measurements are the stopped tune's own objects (not measured again); NN and TN were measured now.
    expect(r.measurements.filter((m) => m.layout === 'NT')).toEqual(measuredNT);
    for (const m of measuredNT) expect(r.measurements).toContain(m);
    expect(new Set(r.measurements.map((m) => m.layout))).toEqual(new Set(['NT', 'NN', 'TN']));
    expect(matmulTuning(gpu.ctx.device)).toEqual(r.tuning);
    expect(saved.size).toBe(1);
    clearMatmulTuneCache();
    expect(await cachedMatmulTuning(gpu.ctx, store)).toEqual(r.tuning);
  });

  it('a stop asked for after the last product still installs nothing', async () => {
    // A tune that runs to the end asks `stop` before each product and once before installing.
    let asked = 0;
    await autotuneMatmul(gpu.ctx, { shapes: SHAPES, reps: 1, stop: () => (asked++, false) });
    setMatmulTuning(gpu.ctx.device, null);
    clearMatmulTuneCache();
    let n = 0;
    await expect(autotuneMatmul(gpu.ctx, { shapes: SHAPES, reps: 1, stop: () => ++n >= asked })).rejects.toBeInstanceOf(
      TuneStopped,
    );
    expect(n).toBe(asked);
    expect(matmulTuning(gpu.ctx.device)).toEqual({});
  });

  it('ships vec4 (quick to compile) for the CPU adapters and the default variant for GPUs', () => {
    const variants = Object.values(shippedTuning(gpu.ctx));
    if (gpu.ctx.report.isFallbackAdapter || isLlvmpipe(gpu.ctx)) expect(variants).toEqual(['vec4', 'vec4', 'vec4']);
    else expect(variants).toEqual([]);
  });

  it('tunes llvmpipe among the variants that compile within the budget there, and no register tile', () => {
    const fake = (description: string) =>
      ({
        report: { vendor: 'mesa', architecture: 'software', device: '', description, isFallbackAdapter: true },
      }) as GpuContext;
    const llvmpipe = fake('llvmpipe: Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)');
    expect(isLlvmpipe(llvmpipe)).toBe(true);
    expect(tuneCandidates(llvmpipe)).toEqual(['blocked', 'strided', 'vec4']);
    const swiftshader = {
      report: {
        vendor: 'google',
        architecture: 'swiftshader',
        device: '',
        description: 'SwiftShader Device',
        isFallbackAdapter: true,
      },
    } as GpuContext;
    expect(isLlvmpipe(swiftshader)).toBe(false);
    expect(tuneCandidates(swiftshader)).toEqual(['blocked', 'wide', 'square']);
  });
});

describe('every candidate as the model-wide default matches the CPU twin model', () => {
  const config = { ...MODEL_PRESETS.nano, tiedEmbeddings: false };
  const B = 3;
  const T = 17;
  const p = initParams(config, new Rng(4), { std: 0.3 });
  const params = Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
  const rng = new Rng(9);
  const tokens = Uint32Array.from({ length: B * T }, () => rng.int(config.vocabSize));
  const targets = Uint32Array.from({ length: B * T }, () => rng.int(config.vocabSize));
  const mask = new Float32Array(B * T).fill(1);
  // The twin in f64 is the reference.
  const p64 = initParams(config, new Rng(4), { std: 0.3, dtype: 'f64' });
  const { logits, cache } = modelForward(config, p64, tokens, B, T);
  const flat = host(logits.data, [B * T, config.vocabSize]);
  const lossWant = host(new Float64Array(1), [1]);
  ceForwardTwin(lossWant, flat, targets, mask);
  const dLogitsWant = host(new Float64Array(B * T * config.vocabSize), [B, T, config.vocabSize]);
  ceBackwardTwin(host(dLogitsWant.data, [B * T, config.vocabSize]), flat, targets, mask);
  const gradsWant = modelBackward(config, p64, cache, dLogitsWant);

  for (const variant of TUNE_CANDIDATES as readonly MatmulVariant[]) {
    it(`${variant} for A*B^T, A*B and A^T*B`, async () => {
      setMatmulTuning(gpu.ctx.device, { NT: variant, NN: variant, TN: variant });
      const model = GpuModel.create(gpu.ctx, config, params, B);
      const u32 = (data: Uint32Array, label: string) =>
        gpu.ctx.fromArray<'u32'>(data, [data.length], { dtype: 'u32', label });
      const inp = {
        tokens: u32(tokens, 'tokens'),
        positions: u32(
          Uint32Array.from({ length: B * T }, (_, i) => i % T),
          'positions',
        ),
      };
      const gTargets = u32(targets, 'targets');
      const gMask = gpu.ctx.fromArray(mask, [B * T], { label: 'mask' });
      const loss = gpu.ctx.tensor([1], { label: 'loss' });
      const dLogits = gpu.ctx.tensor([B, T, config.vocabSize], { label: 'dLogits' });
      const rec = gpu.ctx.recorder('tuned step');
      const ws = model.forward(rec, B, T, inp);
      const logits = gpu.ctx.tensor([B, T, config.vocabSize], { label: 'logits' });
      model.logitsOf(rec, ws, logits);
      crossEntropyForward(rec, loss, logits.reshape2d(), gTargets, gMask);
      crossEntropyBackward(rec, dLogits.reshape2d(), logits.reshape2d(), gTargets, gMask);
      model.zeroGrads(rec);
      model.headBackwardOf(rec, ws, dLogits);
      model.backward(rec, ws, inp);
      rec.submit();
      const [lossGot] = await gpu.ctx.readMany([loss]);
      const grads = await model.downloadGrads();
      const rel = (got: ArrayLike<number>, want: ArrayLike<number>) => {
        let d = 0;
        let m = 0;
        for (let i = 0; i < want.length; i++) {
          d = Math.max(d, Math.abs(got[i] - want[i]));
          m = Math.max(m, Math.abs(want[i]));
        }
        return d / (m + 1e-12);
      };
      expect(rel(lossGot, lossWant.data)).toBeLessThan(1e-5);
      for (const [name, want] of Object.entries(gradsWant))
        expect(rel(grads[name], want.data), `${variant} grad ${name}`).toBeLessThan(1e-4);
      for (const t of [inp.tokens, inp.positions, gTargets, gMask, loss, dLogits]) t.destroy();
      model.destroy();
    });
  }
});
