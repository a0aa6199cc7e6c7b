// BENCHMARKS.md's summary reads back what the bench wrote: a report rendered into a device's detail file gives the
// summary its training step, each peer's ratio, the GRPO step and the real-size rows; the generated part is replaced
// in place, the hand-written text around it kept; each adapter gets its own detail file.
import { describe, expect, it } from 'vitest';
import type { AdapterReport } from '../gpu';
import { REPORT_SCHEMA, updateDeviceBenchmarksMarkdown, type BenchReport, type BenchRow } from './bench-report';
import { benchSections, benchmarksSummary, deviceFileName, withBenchmarksSummary } from './bench-summary';

const adapter = {
  runtime: 'node',
  vendor: 'google',
  architecture: 'swiftshader',
  device: '',
  description: 'SwiftShader driver 5.0.0',
  isFallbackAdapter: true,
  features: [],
  limits: {},
} as unknown as AdapterReport;

const row = (section: BenchRow['section'], name: string, ms: number, vsOurs?: number): BenchRow => ({
  preset: 'nano',
  section,
  name,
  ms,
  samples: 5,
  method: 'wall',
  vsOurs,
});

const report: BenchReport = {
  schema: REPORT_SCHEMA,
  createdAt: '2026-12-01T10:00:00.000Z',
  command: 'npm run bench -- --preset nano',
  adapter,
  device: 'google swiftshader SwiftShader driver 5.0.0 (software fallback: correct but slow) · subgroups',
  kernelTiming: 'wall',
  options: { presets: ['nano'], quick: false, reps: 5, sections: ['phase', 'compare', 'grpo'] },
  presets: [
    { preset: 'nano', parameters: 55680, shape: { B: 16, T: 64, rollout: { rows: 64, prompt: 16, newTokens: 48 } } },
  ],
  rows: [
    row('phase', 'forward', 50),
    row('phase', 'step', 200),
    row('compare', 'ours (WGSL)', 199.4, 1),
    row('compare', 'TensorFlow.js WebGPU', 4163, 20.88),
    row('compare', 'jax-js WebGPU (jit)', 409.7, 2.05),
    row('grpo', 'gen', 300),
    row('grpo', 'step', 1505),
  ],
  notes: [],
  totalSeconds: 100,
};

describe('the benchmark summary', () => {
  it('reads the step, the peers and the GRPO step back from a section the bench wrote', () => {
    const detail = updateDeviceBenchmarksMarkdown('', report);
    expect(detail).toMatch(/^# Benchmarks on google swiftshader/);
    const [section] = benchSections(detail);
    expect(section).toEqual({
      device: 'google swiftshader SwiftShader driver 5.0.0',
      command: 'npm run bench -- --preset nano',
      date: '2026-12-01',
      presets: [
        {
          preset: 'nano',
          stepMs: '199.4',
          peers: [
            { name: 'TensorFlow.js', ratio: '20.88x' },
            { name: 'jax-js', ratio: '2.05x' },
          ],
          grpoStepMs: '1505',
        },
      ],
      realSize: [],
    });
    const summary = benchmarksSummary([{ name: 'swiftshader.md', text: detail }]);
    expect(summary).toContain('(docs/benchmarks/swiftshader.md)');
    expect(summary).toContain(
      '| 2026-12-01 | `npm run bench -- --preset nano` | nano | 199.4 | TensorFlow.js 20.88x, jax-js 2.05x | 1505 |',
    );
  });

  it('replaces only the generated part of BENCHMARKS.md', () => {
    const once = withBenchmarksSummary('# Benchmarks\n\nBy hand.\n', 'first');
    const page = `${once}\nAlso by hand.\n`;
    const twice = withBenchmarksSummary(page, 'second');
    expect(twice).toContain('By hand.');
    expect(twice).toContain('Also by hand.');
    expect(twice).toContain('second');
    expect(twice).not.toContain('first');
  });

  it('names the detail file after the driver or the vendor', () => {
    expect(deviceFileName(adapter)).toBe('swiftshader');
    expect(deviceFileName({ vendor: 'mesa', architecture: 'software', device: '', description: 'llvmpipe' })).toBe(
      'lavapipe',
    );
    expect(deviceFileName({ vendor: 'nvidia', architecture: '', device: '', description: 'NVIDIA: 580' })).toBe(
      'nvidia',
    );
  });
});
