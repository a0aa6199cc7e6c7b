// Compares the seconds-per-step estimate (src/schema/step-estimate.ts) with measured GRPO steps on this machine's adapter:
// the throughput probe first (src/bench/throughput-probe.ts), then 1 + REPS steps each of the bench's nano and micro
// GRPO steps (src/bench/grpo.ts: 8 prompts x 8 completions, copy task) and of the real-model experiment on the shipped
// tiny-qwen2 folder (chat template, LoRA, think/answer word problems); prints measured and estimated seconds per
// phase and their ratio (with the adapter kind's calibration factor, src/schema/step-estimate.ts, and without it:
// the factor is set from the ratio without it), and the machine's load. `npm run calibrate-estimate` (add `-- --reps N`).

import { loadavg } from 'node:os';
import { grpoBenchConfig, grpoShape } from '../src/bench/grpo';
import { estimatedPhases } from '../src/bench/estimate-check';
import { median } from '../src/bench/measure';
import { probeThroughput } from '../src/bench/throughput-probe';
import { PUBLIC_ASSETS } from '../src/engine/node-assets';
import { NO_SINK, RunSession } from '../src/engine/run-session';
import { CHAR_TOKENIZER_PATH, type AssetLoader } from '../src/engine/start-policy';
import { acquireNodeDevice } from '../src/gpu/node';
import { MODEL_PRESETS, type ModelConfig } from '../src/schema/model-config';
import { buildCharTokenizerJson } from '../src/io/tokenizer';
import { realModelExperiment, resolveConfig, type RLConfig } from '../src/schema/config';
import { describeAdapter } from '../src/schema/adapter-text';
import { assumedThroughput, estimateStepSeconds, stepWork, type Throughput } from '../src/schema/step-estimate';

const reps = Number(process.argv[process.argv.indexOf('--reps') + 1]) || 2;
const CHAR_ONLY: AssetLoader = {
  text: async (p) => (p === CHAR_TOKENIZER_PATH ? JSON.stringify(buildCharTokenizerJson()) : PUBLIC_ASSETS.text(p)),
  bytes: (p) => PUBLIC_ASSETS.bytes(p),
};

/** Median seconds per phase over the last `reps` of 1 + reps steps (the first compiles). */
async function measure(config: RLConfig, ctx: Awaited<ReturnType<typeof acquireNodeDevice>>) {
  const session = await RunSession.open(
    { config, backend: 'webgpu', divergence: 'stop', inspectGroups: 0 },
    { assets: CHAR_ONLY, sink: NO_SINK, device: async () => ctx },
  );
  const samples: Record<string, number>[] = [];
  let model: ModelConfig;
  try {
    model = session.start!.modelConfig;
    for (let i = 0; i <= reps; i++) {
      const o = await session.runStep();
      if (o.kind === 'diverged') throw new Error(o.message);
      if (i > 0) samples.push(o.records[o.records.length - 1].metrics);
    }
  } finally {
    session.destroy();
  }
  const m = (k: string) => median(samples.map((s) => s[k] ?? 0));
  return {
    model,
    config: session.config,
    phases: {
      gen: m('timing_s/gen'),
      old_log_prob: m('timing_s/old_log_prob'),
      update: m('timing_s/update_actor'),
      step: m('step_time'),
    },
  };
}

const measuredRuns: { name: string; m: Awaited<ReturnType<typeof measure>> }[] = [];

function row(name: string, measured: Awaited<ReturnType<typeof measure>>, t: Throughput): string {
  measuredRuns.push({ name, m: measured });
  const e = estimateStepSeconds(stepWork(measured.config, measured.model), t);
  const factor = t.calibration?.factor ?? 1;
  const assumed = estimateStepSeconds(stepWork(measured.config, measured.model), assumedThroughput(true)).seconds;
  console.error(
    `${name}: step measured ${measured.phases.step.toFixed(3)} s, probe estimate ${e.seconds.toFixed(3)} s, assumed-figures estimate ${assumed.toFixed(3)} s`,
  );
  const est = estimatedPhases(e);
  const cells = [
    ['gen', measured.phases.gen, est.gen],
    ['old_log_prob', measured.phases.old_log_prob, est.old_log_prob],
    ['update (+AdamW)', measured.phases.update, est.update],
    ['step', measured.phases.step, e.seconds],
  ] as const;
  return cells
    .map(
      ([phase, got, want]) =>
        `| ${name} | ${phase} | ${got.toFixed(3)} | ${want.toFixed(3)} | ${got > 0 ? (want / got).toFixed(2) : '-'}x | ${got > 0 ? (want / factor / got).toFixed(2) : '-'}x |`,
    )
    .join('\n');
}

async function main() {
  const load0 = loadavg()[0];
  const ctx = await acquireNodeDevice();
  const t = await probeThroughput(ctx);
  console.log(`adapter: ${describeAdapter(ctx.report)}\nprobe: ${t.source}`);
  console.log(
    `  flops ${(t.flopsPerSecond / 1e9).toFixed(2)} GFLOP/s, bytes ${(t.bytesPerSecond / 1e9).toFixed(2)} GB/s, submit ${(t.submitSeconds * 1e3).toFixed(3)} ms, dispatch ${(t.dispatchSeconds * 1e6).toFixed(1)} us`,
  );
  const lines = [
    '| run | phase | measured s | estimated s | estimate / measured | without the calibration factor |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
  ];
  for (const preset of ['nano', 'micro'] as const) {
    const m = await measure(grpoBenchConfig(preset, grpoShape(preset), reps), ctx);
    lines.push(row(`${preset} (${MODEL_PRESETS[preset].nLayers} layers), 8x8 copy`, m, t));
    console.error(`${preset} done`);
  }
  const experiment = resolveConfig('grpo', {
    ...realModelExperiment('models/tiny-qwen2/', 'word_problems'),
    steps: reps + 1,
    eval_every: 0,
  });
  lines.push(row('tiny-qwen2 experiment (LoRA, chat template), 4x8 word problems', await measure(experiment, ctx), t));
  console.log(lines.join('\n'));
  console.log(`measured: ${JSON.stringify(measuredRuns.map((r) => ({ name: r.name, phases: r.m.phases })))}`);
  console.log(`load average (1 min): ${load0.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`);
  ctx.destroy?.();
  process.exit(0);
}

void main();
