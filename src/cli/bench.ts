// `npm run bench -- [--preset nano,micro] [--quick] [--reps 5] [--selftest] [--out runs/bench]`: the benchmark suite
// (src/bench/suite.ts) in Node on the machine's WebGPU adapter through Dawn, with the TensorFlow.js and jax-js
// peers on the same device. Writes a JSON report and a Markdown table, and (full runs) this device's section of its
// detail file docs/benchmarks/<device>.md, then BENCHMARKS.md's summary of every device (src/cli/benchmarks-doc.ts).
// Progress goes to stderr, the Markdown to stdout. The page runs the same suite at /?bench.

import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { describeAdapter } from '../gpu';
import { acquireNodeDevice, installNavigatorGpu } from '../gpu/node';
import { MODEL_PRESETS, type ModelPresetName } from '../schema/model-config';
import { reportMarkdown } from '../schema/bench-report';
import { CLI_SECTIONS, SUITE_SECTIONS, runBench, type SuiteSection } from '../bench/suite';
import { kernelCases, runKernelCases } from '../kernels/cases';
import { UsageError, helpText, parseArgs, runCli, type FlagSpec } from './args';
import { recordBenchReport } from './benchmarks-doc';

const FLAGS: Record<string, FlagSpec> = {
  preset: {
    type: 'string',
    doc: `comma-separated presets, or "all" (${Object.keys(MODEL_PRESETS).join(', ')})`,
    default: 'nano,micro',
  },
  quick: { type: 'boolean', doc: 'tiny shapes, 2 repetitions: checks that everything runs; measures little' },
  reps: {
    type: 'number',
    doc: 'timed repetitions per figure after warm-up (default 5, quick 2)',
    integer: true,
    min: 1,
    max: 100,
  },
  sections: {
    type: 'string',
    doc: `comma-separated parts to run (${SUITE_SECTIONS.join(', ')})`,
    default: CLI_SECTIONS.join(','),
  },
  selftest: {
    type: 'boolean',
    doc: 'run the kernel self-test (every GPU-vs-twin case) first and record its result in the report',
  },
  tfjs: { type: 'boolean', doc: 'run the TensorFlow.js WebGPU peer (--tfjs=false to skip)', default: true },
  jaxjs: {
    type: 'boolean',
    doc: "run the jax-js WebGPU peer: its step and its matmul at the model's shapes (--jaxjs=false to skip)",
    default: true,
  },
  'cpu-twin': { type: 'boolean', doc: "time the CPU twin's step (--cpu-twin=false to skip)", default: true },
  autotune: {
    type: 'boolean',
    doc: 'run the startup matmul autotune (autotuneMatmul) first (--autotune=false: untuned kernels)',
    default: true,
  },
  out: { type: 'string', doc: 'directory for the JSON report and Markdown table', default: 'runs/bench' },
  record: {
    type: 'boolean',
    doc: "replace this device and command's section of docs/benchmarks/<device>.md and regenerate BENCHMARKS.md's summary (default: on, except with --quick)",
  },
  help: { type: 'boolean', doc: 'show this help' },
};

function listOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T[] {
  const items =
    value === 'all'
      ? [...allowed]
      : value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  for (const item of items) {
    if (!(allowed as readonly string[]).includes(item))
      throw new UsageError(`--${flag}: unknown "${item}" (one of ${allowed.join(', ')})`);
  }
  if (items.length === 0) throw new UsageError(`--${flag} is empty`);
  return items as T[];
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  if (args.help) {
    process.stdout.write(helpText('usage: npm run bench -- [flags]', FLAGS));
    return 0;
  }
  const presets = listOf('preset', String(args.preset), Object.keys(MODEL_PRESETS) as ModelPresetName[]);
  const sections = listOf('sections', String(args.sections), SUITE_SECTIONS) as SuiteSection[];
  const quick = Boolean(args.quick);
  const record = args.record === undefined ? !quick : Boolean(args.record);
  const command = ['npm run bench', ...(argv.length ? ['--', ...argv] : [])].join(' ');

  const ctx = await acquireNodeDevice();
  try {
    installNavigatorGpu();
    process.stderr.write(`bench on ${describeAdapter(ctx.report)}\n`);
    const loadBefore = loadavg()[0];
    let selftest: { passed: number; failed: string[]; seconds: number } | undefined;
    if (args.selftest) {
      process.stderr.write('  kernel self-test\n');
      const t0 = performance.now();
      const results = await runKernelCases(ctx, kernelCases());
      const failed = results.filter((r) => !r.pass).map((r) => `${r.name}: ${r.summary.slice(0, 160)}`);
      selftest = { passed: results.length - failed.length, failed, seconds: (performance.now() - t0) / 1000 };
      process.stderr.write(`  self-test: ${selftest.passed} passed, ${failed.length} failed\n`);
    }
    const report = await runBench(ctx, {
      presets,
      quick,
      reps: typeof args.reps === 'number' ? args.reps : undefined,
      sections,
      tfjs: Boolean(args.tfjs),
      jaxjs: Boolean(args.jaxjs),
      cpuTwin: Boolean(args['cpu-twin']),
      autotune: Boolean(args.autotune),
      command,
      onProgress: (m) => process.stderr.write(`  ${m}\n`),
    });
    report.selftest = selftest;
    // Other processes share the CPU (and, on SwiftShader, the "GPU"): say how busy the machine was.
    report.notes.push(
      `machine load (1-min average) ${loadBefore.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end, on ${availableParallelism()} cores`,
    );
    const md = reportMarkdown(report);
    const dir = String(args.out);
    await mkdir(dir, { recursive: true });
    const stamp = report.createdAt.replace(/[:.]/g, '-');
    for (const name of [`bench-${stamp}`, 'latest']) {
      await writeFile(join(dir, `${name}.json`), JSON.stringify(report, null, 1) + '\n');
      await writeFile(join(dir, `${name}.md`), md);
    }
    process.stdout.write(md);
    process.stderr.write(`report: ${join(dir, `bench-${stamp}.json`)} and .md\n`);
    if (record) {
      for (const path of recordBenchReport('.', report)) process.stderr.write(`updated ${path}\n`);
    }
    return 0;
  } finally {
    ctx.destroy();
  }
}

runCli('bench', main);
