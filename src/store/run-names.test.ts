// Run names: what each run is (a given name, else its preset, the algorithm's knobs it changed, its seed), distinct
// against the earlier saved runs only, so a name never changes when runs are added, charted or edited; the status
// line shows the same name as the runs list.
import { describe, expect, it } from 'vitest';
import { defaultRunName, type RunHeader } from '../schema/run-types';
import { resolveConfig, type PresetName } from '../schema/config';
import { savedRunNames, savedRunNamesOf } from './run-names';
import { IDLE_PROGRESS } from './index';
import { statusLine } from './status-line';

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

describe('saved run names', () => {
  it('name what the run is: the preset, the algorithm knobs changed from it (not the experiment), the seed', () => {
    const names = savedRunNamesOf([
      header('plain', 'grpo', { task: 'copy', difficulty: 3, learning_rate: 1e-3, num_generations: 8, seed: 0 }, 1),
      header('clip', 'grpo', { epsilon_high: 0.28, seed: 0 }, 2),
      header('many', 'dr_grpo', { epsilon: 0.1, epsilon_high: 0.3, beta: 0.1, entropy_coef: 0.01, seed: 2 }, 3),
    ]);
    expect(names.get('plain')).toBe('grpo · seed 0');
    expect(names.get('clip')).toBe('grpo · epsilon_high 0.28 · seed 0');
    expect(names.get('many')).toMatch(/^dr_grpo · .+ · \+1 more · seed 2$/);
    expect(savedRunNamesOf([])).toEqual(new Map());
  });

  it('never change when later runs are saved; a later run that would repeat a name adds what differs, else #n', () => {
    const first = header('first', 'grpo', { seed: 0 }, 1);
    const alone = savedRunNamesOf([first]).get('first');
    const all = [
      first,
      header('lr', 'grpo', { seed: 0, learning_rate: 2e-3 }, 2),
      header('same', 'grpo', { seed: 0 }, 3),
      header('seed', 'grpo', { seed: 1 }, 4),
    ];
    const names = savedRunNamesOf(all);
    expect(names.get('first')).toBe(alone);
    expect(Object.fromEntries(names)).toEqual({
      first: 'grpo · seed 0',
      lr: 'grpo · seed 0 · lr 0.002',
      same: 'grpo · seed 0 #2',
      seed: 'grpo · seed 1',
    });
    // Any subset charted or listed: each run keeps the name it has among all the saved runs.
    expect(savedRunNamesOf(all.slice(0, 2)).get('lr')).toBe(names.get('lr'));
  });

  it('lead with a given name (a lesson run, a rename), told apart from an earlier one by its seed; imported logs by trainer and file', () => {
    const lesson = (id: string, seed: number, at: number) => ({
      ...header(id, 'grpo', { seed }, at),
      name: 'β = 0 (no KL)',
    });
    const trl = (id: string, createdAt: number): RunHeader => ({
      ...header(id, 'grpo', {}, createdAt),
      preset: null,
      status: 'imported',
      origin: { trainer: 'trl', file: 'trainer_state.json', uncatalogued: [] },
    });
    const names = savedRunNamesOf([
      lesson('l0', 0, 1),
      lesson('l1', 1, 2),
      lesson('l0b', 0, 3),
      trl('t1', 4),
      trl('t2', 5),
    ]);
    expect(Object.fromEntries(names)).toEqual({
      l0: 'β = 0 (no KL)',
      l1: 'β = 0 (no KL) · seed 1',
      l0b: 'β = 0 (no KL) #2',
      t1: 'TRL · trainer_state.json',
      t2: 'TRL · trainer_state.json #2',
    });
  });

  it('cut a long value such as a reward function', () => {
    const a = header('a', 'grpo', {}, 1);
    const fn = header('fn', 'grpo', { reward_fn: '(p, c) => c.length > 3 ? 1 : 0' }, 2);
    expect(savedRunNamesOf([a, fn]).get('fn')).toBe('grpo · seed 0 · reward_fn (p, c) => c.len…');
  });

  it('the status line names a run as the runs list does', () => {
    const runs = [header('a', 'grpo', { seed: 0 }, 1), header('b', 'dr_grpo', { seed: 0 }, 2)];
    const names = savedRunNames(runs);
    expect(savedRunNames(runs)).toBe(names); // computed once per runs list
    // The engine's own name ("Dr. GRPO · addition · seed 0") is not what the list shows: the status line follows the list.
    const live = statusLine({
      progress: { ...IDLE_PROGRESS, runId: 'b', name: runs[1].name, status: 'done' },
      gpuStatus: 'ready',
      viewed: runs[1],
      names,
    });
    expect(live.name).toBe('dr_grpo · seed 0');
    expect(live.name).not.toBe(runs[1].name);
  });
});
