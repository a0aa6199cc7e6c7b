// `npm run profile -- [preset] [B] [T]`: one SFT training step of a model preset, kernel by kernel (GPU timestamps);
// prints the heaviest kernels. A development tool; `npm run bench` is the benchmark.
import { MODEL_PRESETS, type ModelPresetName } from '../schema/model-config';
import { GpuModel } from '../model/gpu-model';
import { crossEntropyBackward, crossEntropyForward } from '../kernels/cross-entropy';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { UsageError, runCli } from './args';
import { acquireTunedDevice } from './tuned-device';

async function main(argv: string[]): Promise<number> {
  const preset = (argv[0] ?? 'nano') as ModelPresetName;
  if (!(preset in MODEL_PRESETS))
    throw new UsageError(
      `usage: npm run profile -- [preset] [B] [T]; the preset must be one of ${Object.keys(MODEL_PRESETS).join(', ')}, got "${preset}"`,
    );
  const B = Number(argv[1] ?? 32);
  const T = Number(argv[2] ?? 40);
  for (const [name, v] of [
    ['B', B],
    ['T', T],
  ] as const)
    if (!Number.isInteger(v) || v < 1)
      throw new UsageError(`${name} must be a whole number >= 1, got "${name === 'B' ? argv[1] : argv[2]}"`);
  const config = MODEL_PRESETS[preset];
  const ctx = await acquireTunedDevice();
  const p = initParams(config, new Rng(1), { std: 0.02 });
  const model = GpuModel.create(
    ctx,
    config,
    Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)])),
    B,
  );
  const N = B * T;
  const rng = new Rng(2);
  const tokens = ctx.fromArray<'u32'>(
    Uint32Array.from({ length: N }, () => rng.int(config.vocabSize)),
    [N],
    { dtype: 'u32' },
  );
  const positions = ctx.fromArray<'u32'>(
    Uint32Array.from({ length: N }, (_, i) => i % T),
    [N],
    { dtype: 'u32' },
  );
  const mask = ctx.fromArray(new Float32Array(N).fill(1), [N]);
  const loss = ctx.tensor([1]);
  // Whole logits, as the bench's SFT step computes them (a small preset); the trainers chunk the head instead.
  const logits = ctx.tensor([B, T, config.vocabSize]);
  const dLogits = ctx.tensor([B, T, config.vocabSize]);
  for (let iter = 0; iter < 2; iter++) {
    const rec = ctx.recorder('step', { profile: iter === 1 });
    const t0 = performance.now();
    const inp = { tokens, positions };
    const ws = model.forward(rec, B, T, inp);
    model.logitsOf(rec, ws, logits);
    crossEntropyForward(rec, loss, logits.reshape2d(), tokens, mask);
    crossEntropyBackward(rec, dLogits.reshape2d(), logits.reshape2d(), tokens, mask);
    model.zeroGrads(rec);
    model.headBackwardOf(rec, ws, dLogits);
    model.backward(rec, ws, inp);
    model.optimizerStep(rec, { lr: 1e-3, weightDecay: 0 });
    rec.submit();
    await ctx.flush();
    const wall = performance.now() - t0;
    if (iter === 1) {
      const timings = await rec.timings();
      const by = new Map<string, { ms: number; n: number }>();
      for (const t of timings) {
        const e = by.get(t.label) ?? { ms: 0, n: 0 };
        e.ms += t.ms;
        e.n++;
        by.set(t.label, e);
      }
      const total = timings.reduce((s, t) => s + t.ms, 0);
      console.log(
        `${preset} B=${B} T=${T}: wall ${wall.toFixed(0)} ms, GPU sum ${total.toFixed(0)} ms over ${timings.length} dispatches`,
      );
      for (const [label, e] of [...by].sort((a, b) => b[1].ms - a[1].ms).slice(0, 14)) {
        console.log(`  ${label.padEnd(40)} ${e.ms.toFixed(1).padStart(8)} ms  x${e.n}`);
      }
    } else console.log(`first step (compiles pipelines): ${wall.toFixed(0)} ms`);
  }
  ctx.destroy();
  return 0;
}

runCli('profile', main);
