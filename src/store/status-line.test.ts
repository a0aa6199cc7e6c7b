// The status line's words: each phase of a run (device, tuning, loading, evaluating step 0 and compiling, training,
// paused and why, finished), no ETA until a step after the session's first is timed, and a line about the saved run
// the charts show (where it stopped, its last reward, whether another run trains) instead of "no run yet".
import { describe, expect, it } from 'vitest';
import { IDLE_PROGRESS, type RunHeader, type RunPhase, type RunProgress } from '../schema/run-types';
import { resolveConfig } from '../schema/config';
import { phaseText, statusLine } from './status-line';

const live = (p: Partial<RunProgress>): RunProgress => ({
  ...IDLE_PROGRESS,
  runId: 'r1',
  name: 'grpo · copy 3 · seed 1',
  status: 'running',
  totalSteps: 150,
  ...p,
});

function saved(p: Partial<RunHeader> = {}): RunHeader {
  return {
    id: 'r3',
    name: 'grpo · copy 3 · seed 3',
    createdAt: 0,
    updatedAt: 0,
    config: resolveConfig('grpo', { steps: 150 }),
    preset: 'grpo',
    backend: 'webgpu',
    status: 'done',
    step: 150,
    savedStep: 150,
    elapsedMs: 0,
    adapter: '',
    lastMetrics: { reward: 0.5512 },
    ...p,
  };
}

describe('phaseText', () => {
  it('names every phase of a run', () => {
    const cases: [RunPhase, RunProgress['status'], number, string][] = [
      [{ kind: 'idle' }, 'idle', 0, 'no run yet: pick a preset and press Start'],
      [{ kind: 'loading' }, 'loading', 0, 'loading the model'],
      [
        { kind: 'warming-up', evaluatesStep0: true, kernelsCompiled: 0 },
        'running',
        0,
        'evaluating step 0 and compiling kernels',
      ],
      [
        { kind: 'warming-up', evaluatesStep0: true, kernelsCompiled: 37 },
        'running',
        0,
        'evaluating step 0 and compiling kernels (37 so far)',
      ],
      [
        { kind: 'warming-up', evaluatesStep0: false, kernelsCompiled: 0 },
        'running',
        40,
        'compiling kernels · step 41 of 150',
      ],
      [{ kind: 'training' }, 'running', 1, 'training step 2 of 150'],
      [{ kind: 'training' }, 'pausing', 7, 'pausing after step 8 of 150'],
      [{ kind: 'paused', by: 'person' }, 'paused', 7, 'paused at step 7'],
      [{ kind: 'paused', by: 'divergence' }, 'paused', 7, 'paused at step 7: diverged, back at the saved state'],
      [{ kind: 'paused', by: 'alert' }, 'paused', 7, 'paused at step 7 by an alert'],
      [{ kind: 'done' }, 'done', 150, 'finished at step 150'],
      [{ kind: 'stopped' }, 'failed', 12, 'failed at step 12'],
      [{ kind: 'stopped' }, 'interrupted', 12, 'interrupted at step 12'],
    ];
    for (const [phase, status, step, text] of cases) expect(phaseText(phase, status, step, 150)).toBe(text);
  });
});

describe('statusLine', () => {
  it('says the device is requested before any run (and while the first run waits for it)', () => {
    expect(statusLine({ progress: IDLE_PROGRESS, gpuStatus: 'starting', viewed: null })).toEqual({
      about: 'none',
      name: '',
      phase: 'requesting a WebGPU device…',
      details: [],
    });
    const loading = live({ status: 'loading', phase: { kind: 'loading' } });
    expect(statusLine({ progress: loading, gpuStatus: 'starting', viewed: null }).phase).toBe(
      'requesting a WebGPU device…',
    );
    expect(statusLine({ progress: loading, gpuStatus: 'ready', viewed: null }).phase).toBe('loading the model');
    expect(statusLine({ progress: IDLE_PROGRESS, gpuStatus: 'ready', viewed: null }).phase).toBe(
      'no run yet: pick a preset and press Start',
    );
  });

  it('adds the background matmul tune while it measures or waits, to whichever run the line is about', () => {
    const idle = statusLine({ progress: IDLE_PROGRESS, gpuStatus: 'ready', tuneState: 'measuring', viewed: null });
    expect(idle.phase).toBe('no run yet: pick a preset and press Start');
    expect(idle.details).toEqual(['tuning the matmul kernels for this adapter in the background (for the next run)']);
    const done = live({ step: 150, status: 'done', phase: { kind: 'done' } });
    const waiting = statusLine({ progress: done, gpuStatus: 'ready', tuneState: 'waiting', viewed: null });
    expect(waiting.details.at(-1)).toMatch(/^matmul tune waits until no run is loaded/);
    for (const tuneState of ['done', 'failed', null] as const)
      expect(statusLine({ progress: done, gpuStatus: 'ready', tuneState, viewed: null }).details.join()).not.toMatch(
        /tun/,
      );
  });

  it('points at the lesson when one is open and no run is loaded', () => {
    const input = { progress: IDLE_PROGRESS, gpuStatus: 'ready', lessonOpen: true, viewed: null } as const;
    expect(statusLine(input).phase).toBe("no run yet: answer the lesson's question, then press its Run");
    expect(statusLine({ ...input, gpuStatus: 'starting' }).phase).toBe('requesting a WebGPU device…');
    const running = live({ step: 3, phase: { kind: 'training' } });
    expect(statusLine({ ...input, progress: running }).phase).toBe('training step 4 of 150');
  });

  it('shows no ETA after the first step alone, and an ETA from the pace once a later step is timed', () => {
    // After step 1 (16.9 s, compiles included) the engine reports no pace: no ETA, no s/step.
    const first = live({ step: 1, lastStepMs: 16_900, paceMs: 0, elapsedMs: 17_000, phase: { kind: 'training' } });
    const l1 = statusLine({ progress: first, gpuStatus: 'ready', viewed: null });
    expect(l1.about).toBe('live');
    expect(l1.phase).toBe('training step 2 of 150');
    expect(l1.details).toEqual(['1 of 150 done', 'elapsed 0:17']);
    const later = live({ step: 10, paceMs: 700, tokensPerSec: 42.5, savedStep: 8, phase: { kind: 'training' } });
    expect(statusLine({ progress: later, gpuStatus: 'ready', viewed: null }).details).toEqual([
      '10 of 150 done',
      'elapsed 0:00',
      'ETA 1:38', // 140 steps x 0.7 s
      '0.70 s/step · 42.5 tokens/s',
      'saved at step 8',
    ]);
    // A paused run has a pace but no ETA.
    const paused = { ...later, status: 'paused' as const, phase: { kind: 'paused', by: 'person' } as const };
    expect(statusLine({ progress: paused, gpuStatus: 'ready', viewed: null }).details.join(' · ')).not.toMatch(/ETA/);
  });

  it('is about the saved run the charts show, and says what the live run does', () => {
    const none = statusLine({ progress: IDLE_PROGRESS, gpuStatus: 'ready', viewed: saved() });
    expect(none).toEqual({
      about: 'viewed',
      name: 'grpo · copy 3 · seed 3',
      phase: 'viewing a saved run',
      details: ['finished at step 150', 'last reward 0.5512'],
    });
    const training = live({ step: 4, phase: { kind: 'training' } });
    const other = statusLine({
      progress: training,
      gpuStatus: 'ready',
      viewed: saved({ status: 'interrupted', step: 12, lastMetrics: {}, seedGroup: { id: 'G', index: 1, size: 3 } }),
    });
    expect(other.details).toEqual(['interrupted at step 12 of 150', 'seed group: run 2 of 3']);
    expect(other.live).toBe('live run grpo · copy 3 · seed 1: training step 5 of 150');
    // The live run viewed: the line is the live run's.
    const same = statusLine({ progress: training, gpuStatus: 'ready', viewed: saved({ id: 'r1' }) });
    expect([same.about, same.live]).toEqual(['live', undefined]);
  });
});
