// The benchmark's result format: a flat list of rows (streamed to the page as they are measured), the report
// that wraps them with the device and options, and its Markdown rendering. Plain data only; no GPU, no DOM.

import type { AdapterReport } from '../gpu';
import type { MatmulTuning } from '../kernels/matmul';
import type { TuneMeasurement } from '../kernels/matmul-tune';
import type { PeakResult } from '../bench/peak';
import type { TimingMethod } from '../bench/measure';
import { formatBytes } from '../core/format';
import { deviceFileHeader } from './bench-summary';

export const REPORT_SCHEMA = 'rl-lab-bench/1';

/** The phase row of a preset's first step, which includes compiling the pipelines nothing before it compiled. */
export const FIRST_STEP = 'first step (compiles pipelines)';
/** Phase rows that are not a part of the step (no share of it). */
const NOT_A_PART = ['step', 'kernel sum', FIRST_STEP];

/** What a row measures. */
export type BenchSection = 'phase' | 'compare' | 'matmul-peer' | 'rollout' | 'kernel' | 'autotune' | 'grpo';

/** One measured figure. Times are medians over `samples` repetitions after warm-up. */
export interface BenchRow {
  preset: string;
  section: BenchSection;
  name: string;
  /** Shapes or batch, for people ("N=1024 C=48"). */
  shape?: string;
  /** Median milliseconds per call. */
  ms: number;
  samples: number;
  method: TimingMethod;
  /** Kernel rows: launches of this kernel (at this shape) per training step. */
  perStep?: number;
  gflops?: number;
  gbps?: number;
  tokensPerS?: number;
  /** Compare and matmul-peer rows: this implementation's time over ours (2 = ours is twice as fast). */
  vsOurs?: number;
  note?: string;
}

/** The batch shapes a preset is measured at. */
export interface BenchShape {
  /** Training step: B sequences of T tokens. */
  B: number;
  T: number;
  /** Rollouts: rows completions, prompts of `prompt` tokens, `newTokens` decode steps (no early stop). */
  rollout: { rows: number; prompt: number; newTokens: number };
}

export interface PresetInfo {
  preset: string;
  parameters: number;
  shape: BenchShape;
}

/**
 * The real-size bench's modes (src/bench/real-size.ts REAL_SIZE_MODES): LoRA, LoRA merged into the sampler's f32
 * copy (rollout_merge_lora), full fine-tuning.
 */
export const REAL_SIZE_MODE_NAMES = ['lora', 'lora-merged', 'full'] as const;
export type RealSizeMode = (typeof REAL_SIZE_MODE_NAMES)[number];

export interface RealSizeResult {
  mode: RealSizeMode;
  /** "2 prompts x 2 completions, up to 16 new tokens". */
  shape: string;
  parameters: number;
  /** The first step's wall time (it compiles every pipeline) and the measured step's (the second). */
  firstStepS: number;
  stepS: number;
  /** Rollout tokens per second and trained tokens per second of the measured step (the trainer's own metrics). */
  rolloutTokensPerS: number;
  trainTokensPerS: number;
  /** Per phase of the measured step, seconds (timing_s/gen, update_actor, ...). */
  phases: Record<string, number>;
  /** Peak GPU tensor bytes over both steps, above what was alive before. */
  peakBytes: number;
  /** The memory plan's peak for the same config (src/rl/observation/memory.ts), to read the measured peak against. */
  plannedPeakBytes: number;
  /** The mode's run in words ("LoRA r=16, micro-batch 4") and the issue's budget for its peak at 8 x 8 x 256. */
  label: string;
  targetBytes: number;
  /** Pipelines compiled and their total wall time; the slowest, as compileReport lines. */
  pipelines: number;
  compileS: number;
  slowestCompiles: string[];
  /**
   * A third step's profile (src/bench/roofline.ts's tables: the decode step's and the update's kernels with
   * their share of the measured bandwidth and peak) and its counts (dispatches per decode step, submits, readbacks),
   * as lines; absent where the step was not profiled.
   */
  profile?: string[];
}

export interface BenchReport {
  schema: typeof REPORT_SCHEMA;
  createdAt: string;
  /** The command (CLI) or page (browser) that produced it. */
  command: string;
  adapter: AdapterReport;
  /** One line naming the adapter (describeAdapter). */
  device: string;
  /** How kernels were timed on this device. */
  kernelTiming: TimingMethod;
  options: { presets: string[]; quick: boolean; reps: number; sections: string[] };
  presets: PresetInfo[];
  rows: BenchRow[];
  /** Problems that did not stop the run (a peer that could not start, a section skipped, ...). */
  notes: string[];
  /** The matmul autotune run at the start (absent when disabled): its choice per layout and what it measured. */
  autotune?: { tuning: MatmulTuning; fromCache: boolean; seconds: number; measurements: TuneMeasurement[] };
  /** The adapter's measured arithmetic peak (register-only multiply-adds), for "fraction of peak". */
  peak?: PeakResult;
  /** The real-size section (src/bench/real-size.ts): one GRPO step of SmolLM2-135M per mode. */
  realSize?: RealSizeResult[];
  /** Where the estimate checks' probe figures came from (Throughput.source), when they ran. */
  probeSource?: string;
  /**
   * The step estimate against each GRPO step the run measured (src/bench/estimate-check.ts): the page's (the
   * throughput probe's figures) and the adapter kind's default figures', whole step and by phase.
   */
  estimates?: EstimateCheck[];
  /** One N^3 matmul by wall clock over repeats ('matmul-4096'), against the measured peak. */
  bigMatmul?: { N: number; variant: string; ms: number; gflops: number; ofPeak?: number; samples: number };
  /**
   * SmolLM2-135M's own products at decode and training rows ('matmul-4096'), the default variant (and at decode rows
   * the split-K product, variant 'split-k'), against the peak.
   */
  modelMatmuls?: { role: string; shape: string; variant: string; ms: number; gflops: number; ofPeak?: number }[];
  /** The kernel self-test run first (`npm run bench -- --selftest`): cases passed and failed, the failures' names. */
  selftest?: { passed: number; failed: string[]; seconds: number };
  /** Every pipeline the run compiled (src/gpu/kernel.ts): how many, how long, how many over the budget, the slowest. */
  compiles?: { pipelines: number; seconds: number; overBudget: number; slowest: string[] };
  totalSeconds: number;
}

/** One measured GRPO step beside what the step estimate said of it (src/bench/estimate-check.ts). */
export interface EstimateCheck {
  /** Which step: "nano GRPO", "real size, lora", ... */
  step: string;
  measuredS: number;
  /** The page's estimate on this adapter: the throughput probe's figures with the kind's calibration. */
  probe: { seconds: number; range: readonly [number, number] };
  /** The estimate from the adapter kind's default figures (assumedThroughput). */
  assumed: { seconds: number; range: readonly [number, number] };
  /** Each phase the estimate models: measured seconds and the probe estimate's. */
  phases: { phase: string; measuredS: number; probeS: number }[];
}

const fmt = (x: number | undefined, digits = 2): string => {
  if (x === undefined || !Number.isFinite(x)) return '';
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1000) return x.toFixed(0);
  if (a >= 100) return x.toFixed(1);
  if (a >= 1) return x.toFixed(digits);
  return x.toPrecision(digits + 1);
};

function table(head: string[], rows: string[][], numeric: boolean[]): string {
  const align = numeric.map((n) => (n ? '---:' : '---'));
  return [`| ${head.join(' | ')} |`, `| ${align.join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** The rows of one preset and section, in measurement order. */
export function rowsOf(rows: readonly BenchRow[], preset: string, section: BenchSection): BenchRow[] {
  return rows.filter((r) => r.preset === preset && r.section === section);
}

/** Markdown tables for one preset: step phases, the peer comparisons (step and matmul), rollouts, GRPO, autotune and kernels. */
export function presetMarkdown(rows: readonly BenchRow[], info: PresetInfo, peakGflops?: number): string {
  const ofPeak = (g: number | undefined) =>
    g !== undefined && peakGflops ? `${((100 * g) / peakGflops).toFixed(1)}%` : '';
  const { preset, shape } = info;
  const out: string[] = [
    `### ${preset} (${info.parameters.toLocaleString('en-US')} parameters; training batch B=${shape.B} x T=${shape.T}; ` +
      `rollouts ${shape.rollout.rows} x (${shape.rollout.prompt} prompt + ${shape.rollout.newTokens} new tokens))`,
  ];
  const phases = rowsOf(rows, preset, 'phase');
  if (phases.length) {
    const step = phases.find((r) => r.name === 'step')?.ms;
    out.push(
      '',
      table(
        ['training step phase', 'ms (median)', 'share of step', 'tokens/s'],
        phases.map((r) => [
          r.name,
          fmt(r.ms),
          step && !NOT_A_PART.includes(r.name) ? `${((100 * r.ms) / step).toFixed(0)}%` : '',
          fmt(r.tokensPerS, 0),
        ]),
        [false, true, true, true],
      ),
    );
  }
  const compare = rowsOf(rows, preset, 'compare');
  if (compare.length) {
    out.push(
      '',
      table(
        ['training step, same model and batch', 'ms (median)', 'time vs ours', 'note'],
        compare.map((r) => [r.name, fmt(r.ms), r.vsOurs !== undefined ? `${fmt(r.vsOurs)}x` : '', r.note ?? '']),
        [false, true, true, false],
      ),
    );
  }
  const matmulPeer = rowsOf(rows, preset, 'matmul-peer');
  if (matmulPeer.length) {
    out.push(
      '',
      table(
        ['matmul, same shape and data', 'shape', 'ms (median)', 'GFLOP/s', 'time vs ours', 'note'],
        matmulPeer.map((r) => [
          r.name,
          r.shape ?? '',
          fmt(r.ms, 3),
          fmt(r.gflops),
          r.vsOurs !== undefined ? `${fmt(r.vsOurs)}x` : '',
          r.note ?? '',
        ]),
        [false, false, true, true, true, false],
      ),
    );
  }
  const rollout = rowsOf(rows, preset, 'rollout');
  if (rollout.length) {
    out.push(
      '',
      table(
        ['rollout', 'shape', 'ms (median)', 'tokens/s', 'time vs ours', 'note'],
        rollout.map((r) => [
          r.name,
          r.shape ?? '',
          fmt(r.ms),
          fmt(r.tokensPerS, 0),
          r.vsOurs !== undefined ? `${fmt(r.vsOurs)}x` : '',
          r.note ?? '',
        ]),
        [false, false, true, true, true, false],
      ),
    );
  }
  const grpo = rowsOf(rows, preset, 'grpo');
  if (grpo.length) {
    const total = grpo.find((r) => r.name === 'step')?.ms;
    out.push(
      '',
      `GRPO step of the RL trainer (${grpo[0].shape ?? ''}; median of ${grpo[0].samples} steps after one warm-up step):`,
      '',
      table(
        ['GRPO step phase', 'ms (median)', 'share of step', 'note'],
        grpo.map((r) => [
          r.name,
          fmt(r.ms),
          total && r.name !== 'step' ? `${((100 * r.ms) / total).toFixed(0)}%` : '',
          r.note ?? '',
        ]),
        [false, true, true, false],
      ),
    );
  }
  const tune = rowsOf(rows, preset, 'autotune');
  if (tune.length) {
    out.push(
      '',
      table(
        ['kernel variant', 'shape', 'ms (median)', 'GFLOP/s', 'of peak', 'note'],
        tune.map((r) => [r.name, r.shape ?? '', fmt(r.ms, 3), fmt(r.gflops), ofPeak(r.gflops), r.note ?? '']),
        [false, false, true, true, true, false],
      ),
    );
  }
  const kernels = rowsOf(rows, preset, 'kernel');
  if (kernels.length) {
    const perStep = (r: BenchRow) => r.ms * (r.perStep ?? 1);
    const total = kernels.reduce((s, r) => s + perStep(r), 0);
    const sorted = [...kernels].sort((a, b) => perStep(b) - perStep(a));
    out.push(
      '',
      table(
        ['kernel (tensors)', 'shape', 'calls/step', 'ms/call', 'ms/step', 'share', 'GFLOP/s', 'of peak', 'GB/s'],
        sorted.map((r) => [
          r.name,
          r.shape ?? '',
          String(r.perStep ?? 1),
          fmt(r.ms, 3),
          fmt(perStep(r)),
          `${((100 * perStep(r)) / total).toFixed(1)}%`,
          fmt(r.gflops),
          ofPeak(r.gflops),
          fmt(r.gbps),
        ]),
        [false, false, true, true, true, true, true, true, true],
      ),
    );
  }
  return out.join('\n');
}

/** The whole report as Markdown: the device, how it was timed, then one block per preset. */
export function reportMarkdown(report: BenchReport): string {
  const head = [
    `## ${report.device}`,
    '',
    `- command: \`${report.command}\``,
    `- date: ${report.createdAt}; runtime: ${report.adapter.runtime}; ${report.totalSeconds.toFixed(0)} s in all`,
    `- kernels timed with ${report.kernelTiming === 'timestamp' ? `GPU timestamps (timestamp-query), one timestamped pass per launch${report.adapter.runtime === 'node' ? ", Dawn's 65.5 µs timestamp quantization off" : ' (the browser may quantize them)'}` : 'submit-and-wait wall clock (no timestamp-query)'}; ` +
      `phases, steps and rollouts with submit-and-wait wall clock; medians of ${report.options.reps} runs after warm-up`,
  ];
  if (report.peak) {
    head.push(
      `- measured arithmetic peak (register-only multiply-add kernel, ${report.peak.invocations.toLocaleString('en-US')} invocations): ` +
        `${fmt(report.peak.gflops)} GFLOP/s; "of peak" columns are fractions of it`,
    );
  }
  for (const n of report.notes) head.push(`- note: ${n}`);
  if (report.autotune) head.push('', autotuneMarkdown(report.autotune));
  const tail: string[] = [];
  if (report.selftest)
    head.push(
      `- kernel self-test: ${report.selftest.passed} cases passed, ${report.selftest.failed.length} failed${report.selftest.failed.length ? ` (${report.selftest.failed.join('; ')})` : ''}, ${report.selftest.seconds.toFixed(0)} s`,
    );
  if (report.bigMatmul) {
    const m = report.bigMatmul;
    tail.push(
      `Matmul ${m.N}x${m.N}x${m.N} (A*B, ${m.variant}, wall clock, median of ${m.samples}): ${fmt(m.ms)} ms, ${fmt(m.gflops)} GFLOP/s${m.ofPeak !== undefined ? `, ${(m.ofPeak * 100).toFixed(1)}% of the measured peak` : ''}.`,
    );
  }
  if (report.modelMatmuls?.length)
    tail.push(
      [
        "SmolLM2-135M's own matmuls (bf16 weights where the model stores them, the default variant, and at a decode step's rows the split-K product beside it; wall clock):",
        '',
        '| product | shape | variant | ms | GFLOP/s | of peak |',
        '|---|---|---|---:|---:|---:|',
        ...report.modelMatmuls.map(
          (m) =>
            `| ${m.role} | ${m.shape} | ${m.variant} | ${fmt(m.ms)} | ${fmt(m.gflops)} | ${m.ofPeak !== undefined ? `${(m.ofPeak * 100).toFixed(1)}%` : ''} |`,
        ),
      ].join('\n'),
    );
  if (report.realSize?.length) tail.push(realSizeMarkdown(report.realSize, report.device));
  if (report.estimates?.length) tail.push(estimatesMarkdown(report.estimates, report.probeSource));
  if (report.compiles)
    tail.push(['Pipeline compiles of the whole run:', '', '```', ...report.compiles.slowest, '```'].join('\n'));
  return (
    [head.join('\n'), ...report.presets.map((p) => presetMarkdown(report.rows, p, report.peak?.gflops)), ...tail].join(
      '\n\n',
    ) + '\n'
  );
}

/** The startup autotune: the variant chosen per layout, and each candidate's summed time on the tune shapes. */
export function autotuneMarkdown(a: NonNullable<BenchReport['autotune']>): string {
  const chosen =
    Object.entries(a.tuning)
      .map(([l, v]) => `${l}: ${v}`)
      .join(', ') || 'none (blocked everywhere)';
  const title = `Matmul autotune (${a.fromCache ? 'cached for this adapter' : `measured in ${a.seconds.toFixed(1)} s`}): ${chosen}.`;
  if (a.measurements.length === 0) return title;
  return `${title}\n\n${table(
    ['layout', 'variant', 'ms (tune shapes)', 'max rel. error vs naive', 'note'],
    a.measurements.map((m) => [
      m.layout,
      m.variant,
      fmt(m.ms),
      m.relError.toExponential(1),
      m.rejected ?? (a.tuning[m.layout] === m.variant ? 'chosen' : ''),
    ]),
    [false, false, true, true, false],
  )}`;
}

/**
 * A stable key for a device and what was run on it: one section of the device's detail file (docs/benchmarks/<device>.md)
 * per (device, presets, sections).
 */
export function sectionKey(report: Pick<BenchReport, 'adapter' | 'options'>): string {
  const a = report.adapter;
  const device = [a.runtime, a.vendor, a.architecture, a.description || a.device].filter(Boolean).join(' ');
  const o = report.options;
  return `${device} | ${o.presets.join(',')} | ${o.sections.join(',')}${o.quick ? ' | quick' : ''}`
    .toLowerCase()
    .replace(/[^a-z0-9 .,|()-]+/g, '')
    .trim();
}

/**
 * The device's detail file (docs/benchmarks/<device>.md, `deviceFileName`) with this report's section replacing the
 * previous one for the same device, presets and sections (or appended): each section sits between <!-- bench:KEY -->
 * and <!-- /bench:KEY --> markers. BENCHMARKS.md's summary is generated from these files (src/schema/bench-summary.ts).
 */
export function updateDeviceBenchmarksMarkdown(existing: string, report: BenchReport): string {
  const key = sectionKey(report);
  const begin = `<!-- bench:${key} -->`;
  const end = `<!-- /bench:${key} -->`;
  const block = `${begin}\n${reportMarkdown(report)}${end}`;
  const base = existing.trim() ? existing : deviceFileHeader(report.device);
  const i = base.indexOf(begin);
  const j = base.indexOf(end);
  if (i >= 0 && j > i) return base.slice(0, i) + block + base.slice(j + end.length);
  return `${base.trimEnd()}\n\n${block}\n`;
}

/** The estimate checks as a table: measured, the page's estimate and its range, the kind's figures, by phase. */
export function estimatesMarkdown(checks: readonly EstimateCheck[], probeSource = ''): string {
  const ratio = (m: number, e: number) => (e > 0 ? `${(m / e).toFixed(2)}x` : '');
  const range = ([lo, hi]: readonly [number, number]) => `${fmt(lo)}-${fmt(hi)}`;
  return [
    `The step estimate (src/schema/step-estimate.ts) against the measured steps: the page's (the throughput probe's figures${probeSource ? `: ${probeSource}` : ''}) and the adapter kind's default figures'; "measured / estimate" over 1 means the step took longer than estimated.`,
    '',
    "| step | measured s | page's estimate s (range) | measured / estimate | in range | default figures s | measured / estimate | phases: measured / page's estimate s |",
    '|---|---:|---:|---:|---|---:|---:|---|',
    ...checks.map(
      (c) =>
        `| ${c.step} | ${fmt(c.measuredS)} | ${fmt(c.probe.seconds)} (${range(c.probe.range)}) | ${ratio(c.measuredS, c.probe.seconds)} | ${c.measuredS >= c.probe.range[0] && c.measuredS <= c.probe.range[1] ? 'yes' : 'no'} | ${fmt(c.assumed.seconds)} | ${ratio(c.measuredS, c.assumed.seconds)} | ${c.phases.map((p) => `${p.phase} ${fmt(p.measuredS)} / ${fmt(p.probeS)}`).join(', ')} |`,
    ),
  ].join('\n');
}

/** The section's Markdown: one row per mode, then each mode's slowest compiles. */
export function realSizeMarkdown(results: readonly RealSizeResult[], device: string): string {
  if (results.length === 0) return '';
  const rows = results.map(
    (r) =>
      `| ${r.label} | ${r.stepS.toFixed(1)} | ${r.firstStepS.toFixed(1)} | ${r.rolloutTokensPerS.toFixed(1)} | ${r.trainTokensPerS.toFixed(1)} | ${formatBytes(r.peakBytes)} (plan ${formatBytes(r.plannedPeakBytes)}; target at 8x8x256 ${formatBytes(r.targetBytes)}) | ${r.pipelines} in ${r.compileS.toFixed(1)} s | ${Object.entries(
        r.phases,
      )
        .map(([k, v]) => `${k} ${v.toFixed(1)}`)
        .join(', ')} |`,
  );
  return [
    `Real size: one GRPO step of SmolLM2-135M's architecture (${(results[0].parameters / 1e6).toFixed(1)}M parameters, random weights, bf16 storage, gradient checkpointing, a reference model at beta 0.04, no weight-update maps) on ${device}; ${results[0].shape}${/fallback/.test(device) ? ' (a small batch: a CPU adapter)' : ''}. Second step measured; the first compiles.`,
    '',
    '| mode | s/step | first step s | rollout tokens/s | train tokens/s | peak GPU tensors | pipelines compiled | phases of the measured step (s) |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...results.flatMap((r) => [`Slowest compiles (${r.mode}):`, '', '```', ...r.slowestCompiles, '```', '']),
    ...results.flatMap((r) =>
      r.profile
        ? [`Profile of a third step, after the measured one (${r.mode}):`, '', '```', ...r.profile, '```', '']
        : [],
    ),
  ].join('\n');
}
