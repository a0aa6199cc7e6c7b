// `npm run profile -- --model smollm2-135m [flags]`: one GRPO step of a recorded real architecture (random weights,
// the real-size bench's run: bf16 storage, checkpointing, a reference model), the second of two, profiled kernel by
// kernel (GPU timestamps where the adapter has them), decode and update apart: per kernel its calls, time, bytes
// and FLOPs per step and their fractions of the adapter's measured bandwidth and peak, after the step's counts
// (src/gpu/counters.ts). `--layers` keeps fewer decoder layers (a CPU adapter). The older form
// `npm run profile -- [preset] [B] [T]` profiles one SFT step of a small preset. A development tool; `npm run bench`
// is the benchmark.
import { MODEL_PRESETS, type ModelPresetName } from '../schema/model-config';
import { GpuModel } from '../model/gpu-model';
import { crossEntropyBackward, crossEntropyForward } from '../kernels/cross-entropy';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { UsageError, helpText, parseArgs, runCli, type FlagSpec } from './args';
import { acquireTunedDevice } from './tuned-device';
import { REAL_CONFIG_FILES, realModelConfig, type RealModelName } from '../io/real-models.fixture';
import { benchRealSizeStep, realSizeFolder, realSizeShape } from '../bench/real-size';
import { measureRoof } from '../bench/roofline';
import { REAL_SIZE_MODE_NAMES, type RealSizeMode } from '../schema/bench-report';

const FLAGS: Record<string, FlagSpec> = {
  model: {
    type: 'string',
    value: 'name',
    doc: `a recorded architecture: ${Object.keys(REAL_CONFIG_FILES).join(', ')}`,
  },
  mode: {
    type: 'string',
    value: REAL_SIZE_MODE_NAMES.join('|'),
    doc: 'LoRA r=16, the same merged into the sampler copy, or full fine-tuning (the real-size modes)',
    default: 'lora',
  },
  layers: { type: 'number', doc: 'decoder layers kept (default: all of the model)', integer: true, min: 1 },
  prompts: {
    type: 'number',
    doc: 'prompts per step (default: the real-size batch of the adapter)',
    integer: true,
    min: 1,
  },
  generations: { type: 'number', doc: 'completions per prompt', integer: true, min: 1 },
  tokens: { type: 'number', doc: 'new tokens per completion at most', integer: true, min: 1 },
  top: { type: 'number', doc: 'kernels shown per phase', integer: true, min: 1, default: 10 },
  roofline: {
    type: 'boolean',
    doc: 'measure the copy bandwidth and arithmetic peak (--roofline=false: skip)',
    default: true,
  },
  help: { type: 'boolean', doc: 'show this help' },
};

async function profileRealModel(argv: string[]): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  if (args.help) {
    process.stdout.write(helpText('usage: npm run profile -- --model <name> [flags]', FLAGS));
    return 0;
  }
  const name = String(args.model ?? '');
  if (!(name in REAL_CONFIG_FILES))
    throw new UsageError(`--model must be one of ${Object.keys(REAL_CONFIG_FILES).join(', ')}, got "${name}"`);
  const mode = String(args.mode) as RealSizeMode;
  if (!REAL_SIZE_MODE_NAMES.includes(mode))
    throw new UsageError(`--mode must be one of ${REAL_SIZE_MODE_NAMES.join(', ')}, got "${mode}"`);
  const recorded = realModelConfig(name as RealModelName).config;
  const layers = Math.min(Number(args.layers ?? recorded.nLayers), recorded.nLayers);
  const model = { ...recorded, nLayers: layers };
  const ctx = await acquireTunedDevice();
  try {
    const base = realSizeShape(ctx);
    const shape = {
      prompts: Number(args.prompts ?? base.prompts),
      generations: Number(args.generations ?? base.generations),
      maxTokens: Number(args.tokens ?? base.maxTokens),
    };
    const log = (m: string) => process.stderr.write(`${m}\n`);
    const roof = args.roofline ? await measureRoof(ctx) : null;
    log(`building ${name} with ${layers} of ${recorded.nLayers} layers (random weights)`);
    const folder = realSizeFolder(model);
    const r = await benchRealSizeStep(ctx, mode, shape, folder, log, { profile: { roof, top: Number(args.top) } });
    console.log(
      `${name} (${layers} layers, ${(r.parameters / 1e6).toFixed(1)}M parameters), ${r.label}, ${r.shape}, on ${ctx.report.description || ctx.report.architecture}: step ${r.stepS.toFixed(2)} s (the second, unprofiled), first step ${r.firstStepS.toFixed(2)} s`,
    );
    for (const line of r.profile ?? []) console.log(line);
  } finally {
    ctx.destroy();
  }
  return 0;
}

async function main(argv: string[]): Promise<number> {
  if (argv[0]?.startsWith('--')) return profileRealModel(argv);
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
