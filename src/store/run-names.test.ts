// Run labels tell runs apart by the knobs that differ between them (not by colour alone), stay distinct for equal
// configs, and for a run alone name what it changed from its preset.
import { describe, expect, it } from 'vitest';
import { defaultRunName, type RunHeader } from '../schema/run-types';
import { resolveConfig, type PresetName } from '../schema/config';
import { runLabels } from './run-names';

function header(id: string, preset: PresetName, over: Record<string, unknown> = {}, createdAt = 0): RunHeader {
  const config = resolveConfig(preset, over);
  return {
    id,
    name: defaultRunName(config, preset),
    createdAt,
    updatedAt: createdAt,
    config,
    preset,
    backend: 'webgpu',
    status: 'paused',
    step: 1,
    savedStep: 0,
    elapsedMs: 0,
    adapter: '',
    lastMetrics: {},
  };
}

describe('run labels', () => {
  it('name the preset and the knobs whose values differ among the runs', () => {
    const labels = runLabels([
      header('a', 'grpo', { learning_rate: 1e-3, temperature: 0.7 }),
      header('b', 'grpo', { learning_rate: 3e-4, temperature: 1 }),
    ]);
    expect(labels.get('a')).toBe('grpo · temp 0.7 · lr 0.001');
    expect(labels.get('b')).toBe('grpo · temp 1 · lr 0.0003');
  });

  it('name a preset change and the knobs it brings, at most three and a count of the rest', () => {
    const labels = runLabels([header('a', 'grpo'), header('b', 'dapo')]);
    expect(labels.get('a')).toMatch(/^grpo · .+ · \+\d+ more$/);
    expect(labels.get('b')).toMatch(/^dapo · /);
    expect(labels.get('a')!.split(' · ')).toHaveLength(5);
  });

  it('name a run imported from another trainer by its trainer and file, and label the lab runs among themselves', () => {
    const trl = (id: string, createdAt: number): RunHeader => ({
      ...header(id, 'grpo', {}, createdAt),
      preset: null,
      status: 'imported',
      origin: { trainer: 'trl', file: 'trainer_state.json', uncatalogued: [] },
    });
    const labels = runLabels([
      header('lab', 'grpo', { seed: 3 }),
      trl('t2', 20),
      trl('t1', 10),
      { ...trl('v', 5), origin: { trainer: 'verl', file: 'metrics.jsonl', uncatalogued: [] } },
    ]);
    expect(Object.fromEntries(labels)).toEqual({
      lab: 'grpo · addition · seed 3',
      t1: 'TRL · trainer_state.json',
      t2: 'TRL · trainer_state.json #2',
      v: 'verl · metrics.jsonl',
    });
  });

  it('number runs with equal configs by creation, so no two labels are the same', () => {
    const labels = runLabels([
      header('late', 'grpo', { seed: 1 }, 20),
      header('early', 'grpo', { seed: 1 }, 10),
      header('other', 'grpo', { seed: 2 }, 5),
    ]);
    expect(labels.get('early')).toBe('grpo · seed 1');
    expect(labels.get('late')).toBe('grpo · seed 1 #2');
    expect(labels.get('other')).toBe('grpo · seed 2');
  });

  it('for a run alone, name its task and what it changed from its preset', () => {
    expect(runLabels([header('a', 'grpo', { task: 'copy', difficulty: 3 })]).get('a')).toBe('grpo · copy 3');
    expect(
      runLabels([
        header('a', 'grpo', { task: 'copy', difficulty: 3, learning_rate: 1e-3, steps: 40, curriculum: 'adaptive' }),
      ]).get('a'),
    ).toBe('grpo · copy 3 · lr 0.001');
    expect(runLabels([])).toEqual(new Map());
  });

  it('name each run by the knobs where it stands apart from the others, not by what most of them share', () => {
    // Lesson-like runs: most on copy 3 from one checkpoint, one on another task; they differ in one knob each.
    const common = { task: 'copy', difficulty: 3 };
    const labels = runLabels([
      header('base', 'grpo', common, 1),
      header('lr', 'grpo', { ...common, learning_rate: 1e-3 }, 2),
      header('temp', 'grpo', { ...common, temperature: 0.5 }, 3),
      header('task', 'grpo', { task: 'reverse', difficulty: 2 }, 4),
    ]);
    expect(Object.fromEntries(labels)).toEqual({
      base: 'grpo',
      lr: 'grpo · lr 0.001',
      temp: 'grpo · temp 0.5',
      task: 'grpo · task reverse · difficulty 2',
    });
  });

  it('close every label with the seed when the seeds differ, and tell seeds of one config apart', () => {
    const labels = runLabels([
      header('s1', 'grpo', { seed: 1 }, 1),
      header('s2', 'grpo', { seed: 2 }, 2),
      header('s3lr', 'grpo', { seed: 3, learning_rate: 1e-3 }, 3),
    ]);
    expect(Object.fromEntries(labels)).toEqual({
      s1: 'grpo · seed 1',
      s2: 'grpo · seed 2',
      s3lr: 'grpo · lr 0.001 · seed 3',
    });
    expect(new Set(labels.values()).size).toBe(3);
  });

  it('lead with a name a person or a lesson gave the run, and cut a long value such as a reward function', () => {
    const named = { ...header('lesson', 'grpo', { learning_rate: 1e-3 }, 1), name: 'β = 0 (no KL)' };
    const fn = header('fn', 'grpo', { reward_fn: '(p, c) => c.length > 3 ? 1 : 0' }, 2);
    const labels = runLabels([named, fn, header('plain', 'grpo', {}, 3)]);
    expect(labels.get('lesson')).toBe('β = 0 (no KL)');
    expect(labels.get('fn')).toBe('grpo · reward_fn (p, c) => c.len…');
    expect(runLabels([named]).get('lesson')).toBe('β = 0 (no KL)');
  });

  it('lead with the knobs that tell runs apart when their short labels are equal, and never give two runs one label', () => {
    // Two runs stand apart from the majority in more knobs than a short label names, and differ only in the last.
    const many = { temperature: 0.5, top_k: 5, epsilon: 0.1, beta: 0.1 };
    const labels = runLabels([
      header('a', 'grpo', { ...many, learning_rate: 1e-3 }, 1),
      header('b', 'grpo', { ...many, learning_rate: 2e-3 }, 2),
      header('c', 'grpo', {}, 3),
      header('d', 'grpo', {}, 4),
      header('e', 'grpo', {}, 5),
    ]);
    expect(labels.get('a')).not.toBe(labels.get('b'));
    expect(labels.get('a')).not.toMatch(/#\d/);
    expect(labels.get('a')).toMatch(/^grpo · lr 0.001 · /);
    expect(labels.get('b')).toMatch(/^grpo · lr 0.002 · /);
    expect(labels.get('c')).toBe('grpo');
    expect(labels.get('d')).toBe('grpo #2');
    expect(labels.get('e')).toBe('grpo #3');
  });
});
