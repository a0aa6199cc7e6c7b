// Run labels tell runs apart by the knobs that differ between them (not by colour alone), stay distinct for equal
// configs, and for a run alone name what it changed from its preset.
import { describe, expect, it } from 'vitest';
import type { RunHeader } from '../engine/types';
import { resolveConfig, type PresetName } from '../rl/config';
import { runLabels } from './run-names';

function header(id: string, preset: PresetName, over: Record<string, unknown> = {}, createdAt = 0): RunHeader {
  return {
    id,
    name: `saved name of ${id}`,
    createdAt,
    updatedAt: createdAt,
    config: resolveConfig(preset, over),
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
});
