// The store without a DOM: a shared link's config is read back exactly (or refused with a message and the
// defaults), edits validate per field, a preset switch keeps the experiment, the worker's messages land in
// the right slices, and config diffs name exactly the fields that differ.
import { beforeEach, describe, expect, it } from 'vitest';
import { packRows } from '../engine/metric-batch';
import type { RunProgress } from '../engine/types';
import { configToUrlParams, resolveConfig } from '../rl/config';
import { configDiff, differsFromPreset, switchPreset } from './config-diff';
import { IDLE_PROGRESS, LAB_DEFAULT, useLab } from './index';

const initial = useLab.getState();
beforeEach(() => useLab.setState(initial, true));

const progress = (p: Partial<RunProgress>): RunProgress => ({ ...IDLE_PROGRESS, ...p });

describe('config slice', () => {
  it('reads a shared link back to the same config and preset', () => {
    const c = resolveConfig('dapo', { task: 'sort', difficulty: 4, seed: 123, num_iterations: 2, reward_weights: { accuracy: 0.8, format: 0.2 } });
    useLab.getState().initConfig(`?${configToUrlParams(c, 'dapo')}`);
    const s = useLab.getState();
    expect(s.urlError).toBeNull();
    expect(s.preset).toBe('dapo');
    expect(s.check.config).toEqual(c);
  });

  it('refuses a bad link with every problem named, and keeps the valid defaults', () => {
    useLab.getState().initConfig('?preset=grpoo&temperature=hot&lr=3');
    const s = useLab.getState();
    expect(s.urlError).toMatch(/preset: must be one of/);
    expect(s.urlError).toMatch(/temperature: must be a number/);
    expect(s.urlError).toMatch(/did you mean learning_rate/);
    expect(s.check.config).toEqual(resolveConfig(LAB_DEFAULT.preset, LAB_DEFAULT.overrides));
  });

  it('ignores the page\'s own parameters and an empty query', () => {
    useLab.getState().initConfig('?bench');
    expect(useLab.getState().urlError).toBeNull();
    expect(useLab.getState().preset).toBe(LAB_DEFAULT.preset);
  });

  it('validates edits per field and recovers when fixed', () => {
    const { setField } = useLab.getState();
    setField('temperature', 'hot');
    expect(useLab.getState().check.fieldErrors.temperature).toMatch(/must be a number/);
    expect(useLab.getState().check.config).toBeNull();
    setField('epsilon_high', 0.1);
    setField('temperature', 0.7);
    expect(useLab.getState().check.fieldErrors.epsilon_high).toMatch(/must be >= epsilon/);
    setField('epsilon_high', null);
    expect(useLab.getState().check.config?.temperature).toBe(0.7);
  });

  it('switching preset takes the algorithm knobs and keeps the experiment', () => {
    const { setField, applyPreset } = useLab.getState();
    setField('seed', 9);
    setField('train_batch_size', 2);
    setField('num_iterations', 3);
    applyPreset('dapo');
    const c = useLab.getState().check.config!;
    expect(c).toMatchObject({ seed: 9, train_batch_size: 2, task: 'addition', checkpoint: 'addition', epsilon_high: 0.28, dynamic_sampling: true, beta: 0 });
    expect(c.num_iterations).toBe(1); // an algorithm knob: the preset's (default) value
    expect(switchPreset({ ...resolveConfig('grpo'), dynamic_sampling: true }, 'grpo').dynamic_sampling).toBe(false);
  });

  it('marks the fields that differ from the preset', () => {
    const d = differsFromPreset({ ...resolveConfig('grpo'), seed: 3, beta: 0.04 }, 'grpo');
    expect([...d]).toEqual(['seed']);
  });

  it('picks the warm start of a task when the task changes', () => {
    useLab.setState({ warmStarts: [{ name: 'copy', task: 'copy', difficulty: 5, accuracy: 0.3 }] });
    useLab.getState().setTask('copy');
    expect(useLab.getState().check.config).toMatchObject({ task: 'copy', checkpoint: 'copy', difficulty: 5 });
    useLab.getState().setTask('countdown');
    expect(useLab.getState().check.config).toMatchObject({ task: 'countdown', checkpoint: null, difficulty: null });
  });
});

describe('worker messages', () => {
  const h = useLab.getState().handleResponse;
  it('follow a new run: its view, its metrics, its groups and evaluations', () => {
    h({ type: 'progress', progress: progress({ runId: 'r1', status: 'running', step: 0, totalSteps: 5 }) });
    expect(useLab.getState().viewRunId).toBe('r1');
    h({ type: 'metrics', runId: 'r1', batch: packRows([{ step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, metrics: { reward: 0.5 } }]) });
    h({ type: 'metrics', runId: 'r1', batch: packRows([{ step: 2, optimizerStep: 2, epoch: 0, minibatch: 0, metrics: { reward: 0.75 } }]) });
    const v = useLab.getState().views.r1;
    expect(v.version).toBe(2);
    expect(Array.from(v.table.column('reward')!)).toEqual([0.5, 0.75]);
    h({ type: 'rollouts', runId: 'r1', step: 2, groups: [], texts: [] });
    expect(useLab.getState().views.r1.rolloutSteps).toEqual([2]);
    expect(useLab.getState().rollouts['r1@2']).toBeDefined();
    h({ type: 'evals', runId: 'r1', evals: [{ step: 2, items: 2, accuracy: 0.5, reward: 0.5, passAtK: [0.5, 1] }] });
    expect(useLab.getState().views.r1.evals).toHaveLength(1);
    // A saved run's records replace what the page had for it.
    h({ type: 'run-data', runId: 'r1', batch: packRows([{ step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, metrics: { reward: 0.1 } }]), evals: [], rolloutSteps: [1] });
    expect(useLab.getState().views.r1.table.length).toBe(1);
    expect(useLab.getState().views.r1.rolloutSteps).toEqual([1]);
  });

  it('keep errors where they belong: imports in the runs panel, the rest as notices; no WebGPU selects the CPU', () => {
    h({ type: 'error', message: 'bad.csv: line 1: nope', fatal: false, request: 'import' });
    expect(useLab.getState().importError).toBe('bad.csv: line 1: nope');
    expect(useLab.getState().notices).toHaveLength(0);
    h({ type: 'notice', level: 'error', message: 'Storage is full: ...' });
    h({ type: 'error', message: 'GPU device lost', fatal: true });
    expect(useLab.getState().notices.map((n) => n.message)).toEqual(['Storage is full: ...', 'GPU device lost']);
    expect(useLab.getState().gpuStatus).toBe('error');
    h({ type: 'unavailable', message: 'no navigator.gpu' });
    expect(useLab.getState().backend).toBe('cpu');
  });
});

describe('config diff', () => {
  it('lists exactly the differing fields, in panel order, with the preset when presets differ', () => {
    const a = resolveConfig('grpo', { seed: 1 });
    const b = resolveConfig('grpo', { seed: 2, num_iterations: 2 });
    const c = resolveConfig('dr_grpo', { seed: 1 });
    expect(configDiff([{ config: a, preset: 'grpo' }, { config: b, preset: 'grpo' }]).map((r) => r.field)).toEqual(['num_iterations', 'seed']);
    expect(configDiff([{ config: a, preset: 'grpo' }, { config: a, preset: 'grpo' }])).toEqual([]);
    const rows = configDiff([{ config: a, preset: 'grpo' }, { config: c, preset: 'dr_grpo' }]);
    expect(rows[0]).toEqual({ field: 'preset', values: ['grpo', 'dr_grpo'] });
    expect(rows.map((r) => r.field)).toEqual(['preset', 'adv_estimator', 'loss_agg_mode', 'beta']);
    expect(configDiff([{ config: a, preset: 'grpo' }])).toEqual([]);
  });
});
