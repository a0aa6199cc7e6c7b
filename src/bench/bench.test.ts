// The benchmark suite in --quick mode on nano produces a well-formed report (every section, finite figures, the
// peer and the CPU twin beside ours, Markdown tables), the device's detail file keeps one section per command, and
// BENCHMARKS.md's summary reads the figures back from it.
// The real-size section's step runs through a RunSession over an in-memory folder (here SmolLM2-135M's layout at a
// narrow width, so the test stays cheap). Correctness of the harness only: no timing is asserted.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { acquireNodeDevice, installNavigatorGpu } from '../gpu/node';
import { captureDispatches, groupDispatches, tensorRole } from './kernels';
import {
  REPORT_SCHEMA,
  reportMarkdown,
  updateDeviceBenchmarksMarkdown,
  type BenchReport,
} from '../schema/bench-report';
import { benchSections } from '../schema/bench-summary';
import { OurStep, benchParams, randomBatch } from './step';
import { runBench } from './suite';
import { MODEL_PRESETS } from '../schema/model-config';
import { SMOLLM2_135M } from '../io/real-models.fixture';
import { benchRealSizeStep, realSizeFolder, realSizeShape } from './real-size';
import { REAL_SIZE_MODE_NAMES, realSizeMarkdown } from '../schema/bench-report';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
  installNavigatorGpu();
});
afterAll(() => ctx?.destroy());

describe('bench harness', () => {
  it('names tensors by role, without layer numbers', () => {
    expect(tensorRole('L3.q')).toBe('q');
    expect(tensorRole('grad:model.layers.3.self_attn.q_proj.weight')).toBe('grad:q_proj');
    expect(tensorRole('adam_m:model.layers.0.mlp.up_proj.weight')).toBe('adam_m:up_proj');
    expect(tensorRole('model.norm.weight')).toBe('norm');
  });

  it('captures every dispatch of a step and groups the layers together', async () => {
    const config = MODEL_PRESETS.nano;
    const step = OurStep.create(ctx, config, benchParams(config), randomBatch(config, 2, 8));
    const rec = ctx.recorder('capture');
    const captured = captureDispatches(rec, (r) => step.record(r));
    rec.submit();
    await ctx.flush();
    expect(captured.length).toBe(rec.dispatchCount);
    const groups = groupDispatches(captured);
    expect(groups.reduce((s, g) => s + g.count, 0)).toBe(captured.length);
    const q = groups.find((g) => g.name.startsWith('matmul_') && g.name.endsWith('(q, n1, q_proj)'))!;
    expect(q.count).toBe(config.nLayers);
    expect(q.flop).toBe(2 * 16 * config.dModel * config.dModel);
    step.destroy();
  });

  let report: BenchReport;
  it('runs --quick on nano: every section, finite figures', async () => {
    const seen: string[] = [];
    report = await runBench(ctx, {
      presets: ['nano'],
      quick: true,
      reps: 1,
      command: 'test',
      onRow: (r) => seen.push(r.section),
    });
    expect(report.schema).toBe(REPORT_SCHEMA);
    expect(report.notes).toEqual([]);
    expect(report.presets.map((p) => p.preset)).toEqual(['nano']);
    expect(seen.length).toBe(report.rows.length);
    for (const section of ['phase', 'compare', 'matmul-peer', 'rollout', 'grpo', 'autotune', 'kernel'])
      expect(seen, section).toContain(section);
    for (const r of report.rows) {
      expect(Number.isFinite(r.ms) && r.ms >= 0, `${r.section} ${r.name}: ${r.ms}`).toBe(true);
      if (r.section !== 'kernel') expect(r.ms, `${r.section} ${r.name}`).toBeGreaterThan(0);
    }
    const compare = report.rows.filter((r) => r.section === 'compare').map((r) => r.name);
    expect(compare).toEqual(
      expect.arrayContaining([
        'ours (WGSL)',
        'TensorFlow.js WebGPU',
        'jax-js WebGPU (jit)',
        'CPU twin (reference JS, f32)',
      ]),
    );
    // Our matmul and jax-js's at each of the model's four matmul shapes, each side with its ratio to ours.
    const matmulPeer = report.rows.filter((r) => r.section === 'matmul-peer');
    expect(matmulPeer.length).toBe(8);
    expect(matmulPeer.filter((r) => r.name.startsWith('jax-js')).every((r) => (r.vsOurs ?? 0) > 0)).toBe(true);
    expect(report.autotune?.tuning.NT).toBeDefined();
    expect(report.peak?.gflops).toBeGreaterThan(0);
    const rollout = report.rows.filter((r) => r.section === 'rollout');
    expect(rollout.filter((r) => r.method !== 'host').every((r) => (r.tokensPerS ?? 0) > 0)).toBe(true);
    // The decode step again with each step submitted alone, its time against the engine's shared submits.
    const alone = rollout.find((r) => r.name === 'decode, per step, each submitted alone');
    expect(alone?.vsOurs).toBeGreaterThan(0);
    // The host's time recording a decode step, from the engine's own clock around its recording calls.
    const host = rollout.find((r) => r.name === 'decode, host time recording a step');
    expect(host?.method).toBe('host');
    expect(host?.samples).toBeGreaterThanOrEqual(3);
    // The step estimate beside the measured GRPO step: the page's (the probe's figures) and the kind's defaults'.
    const check = report.estimates?.find((c) => c.step === 'nano GRPO');
    expect(check?.measuredS).toBeGreaterThan(0);
    expect(check?.probe.seconds).toBeGreaterThan(0);
    expect(check?.probe.range[1]).toBeGreaterThanOrEqual(check?.probe.seconds ?? Number.NaN);
    expect(check?.assumed.seconds).toBeGreaterThan(0);
    expect(check?.phases.map((p) => p.phase)).toEqual(['gen', 'old_log_prob', 'update']);
    expect(report.probeSource).toMatch(/measured on this adapter/);
  });

  it("renders Markdown and keeps one section per device and command in the device's detail file", () => {
    const md = reportMarkdown(report);
    expect(md).toContain('| training step, same model and batch |');
    expect(md).toContain('TensorFlow.js WebGPU');
    expect(md).toContain('jax-js WebGPU (jit)');
    expect(md).toContain('| matmul, same shape and data |');
    expect(md).toContain('| kernel (tensors) |');
    expect(md).toContain("| step | measured s | page's estimate s (range) |");
    expect(md).toMatch(/\| nano GRPO \| [0-9.]+ \| [0-9.]+ \([0-9.]+-[0-9.]+\) \| [0-9.]+x \| (yes|no) \|/);
    const once = updateDeviceBenchmarksMarkdown('', report);
    const twice = updateDeviceBenchmarksMarkdown(once, { ...report, createdAt: 'later' });
    expect(twice.split('<!-- bench:').length).toBe(2);
    expect(twice).toContain('later');
    const other = updateDeviceBenchmarksMarkdown(twice, { ...report, adapter: { ...report.adapter, vendor: 'other' } });
    expect(other.split('<!-- bench:').length).toBe(3);
    const otherCommand = updateDeviceBenchmarksMarkdown(other, {
      ...report,
      options: { ...report.options, presets: ['small'] },
    });
    expect(otherCommand.split('<!-- bench:').length).toBe(4);
    // BENCHMARKS.md's summary reads the step and each peer's ratio back from the section the bench wrote.
    const [section] = benchSections(once);
    expect(section.command).toBe(report.command);
    const nano = section.presets.find((p) => p.preset === 'nano');
    expect(nano?.stepMs).toBeDefined();
    expect(nano?.peers.map((p) => p.name)).toEqual(expect.arrayContaining(['TensorFlow.js', 'jax-js', 'CPU twin']));
  });
});

describe('real-size section', () => {
  it('runs two GRPO steps per mode over an in-memory folder and reports finite figures', async () => {
    // SmolLM2-135M's head layout (9 query heads, 3 kv heads) at a narrow width, 2 layers and a 512-token vocabulary.
    const narrow = { ...SMOLLM2_135M, nLayers: 2, dModel: 72, dFF: 96, vocabSize: 512 };
    const folder = realSizeFolder(narrow);
    const shape = realSizeShape(ctx, true);
    const results = [];
    // LoRA also runs a third step, profiled against made-up ceilings (the roofline's columns are ratios of them).
    const roof = { gbps: 1, gflops: 1 };
    for (const mode of REAL_SIZE_MODE_NAMES)
      results.push(
        await benchRealSizeStep(
          ctx,
          mode,
          shape,
          folder,
          () => {},
          mode === 'lora' ? { profile: { roof, top: 3 } } : {},
        ),
      );
    for (const r of results) {
      expect(r.stepS, r.mode).toBeGreaterThan(0);
      expect(r.rolloutTokensPerS, r.mode).toBeGreaterThan(0);
      expect(r.peakBytes, r.mode).toBeGreaterThan(0);
      expect(r.plannedPeakBytes, r.mode).toBeGreaterThan(0);
      expect(Object.keys(r.phases), r.mode).toContain('gen');
    }
    // The first mode compiles the pipelines; the second reuses most of them.
    expect(results[0].pipelines).toBeGreaterThan(0);
    // LoRA keeps no moments for the base weights: its peak is below full fine-tuning's.
    expect(results[0].peakBytes).toBeLessThan(results[1].peakBytes);
    const profile = results[0].profile ?? [];
    expect(results[1].profile).toBeUndefined();
    expect(profile.join('\n')).toMatch(/dispatches per token step over 2 layers/);
    expect(profile.join('\n')).toMatch(
      /\d+\.\d bind groups made \(the first decode step's included\) and \d+\.\d\d ms of host time recording per token step/,
    );
    for (const phase of [
      'rollout.decode: per decode token step',
      'rl.update: per GRPO step',
      'rl.score: per GRPO step',
    ])
      expect(
        profile.some((l) => l.startsWith(phase)),
        phase,
      ).toBe(true);
    // A kernel row per phase at most `top`, each with the two roofline fractions.
    const decodeAt = profile.findIndex((l) => l.startsWith('rollout.decode'));
    const firstKernel = profile[decodeAt + 2];
    expect(firstKernel).toMatch(/^ {2}\S+.*%.*%\s*$/);
    const md = realSizeMarkdown(results, 'test adapter');
    expect(md).toContain('Profile of a third step, after the measured one (lora):');
    expect(md).toContain('| LoRA r=16, micro-batch 4 |');
    expect(md).toContain('| full fine-tune, micro-batch 1 |');
  });
});
