// The status line of the run controls, in words: which run it is about (the live one, or the saved run or seed
// group the charts show), what that run is doing (requesting the device, loading, evaluating step 0 and compiling
// kernels, training, paused and why, finished), its step, elapsed time, ETA and pace, whether the matmul kernels
// are being tuned in the background for the next run, and, when the charts show another run, what the live one is
// doing. One pure formatter; RunControls only lays its parts out.

import type { RunHeader, RunPhase, RunProgress, RunStatus } from '../schema/run-types';
import { timeLeftMs } from '../schema/step-pace';
import type { HubDownloadState, HubProgress } from '../hub/manager-types';
import { clock, fmt, formatBytes, throughput } from './format';
import type { LabState } from './index';
import { savedRunNames } from './run-names';
import { lessonInterruptedRun, viewedRun } from './selectors';
import type { EngineState } from './slices/engine';

/** The states of a hub download still under way (pause is offered; the model is busy). */
export const ACTIVE_DOWNLOAD_STATES: readonly HubDownloadState[] = [
  'checking',
  'downloading',
  'stalled',
  'retrying',
  'verifying',
];

export interface StatusLineInput {
  progress: RunProgress;
  gpuStatus: EngineState['gpuStatus'];
  /** The background matmul tune (null or absent: none runs on this visit). */
  tuneState?: EngineState['tuneState'];
  /** A lesson is open (its Run, not Start, starts its runs). */
  lessonOpen?: boolean;
  /** The open lesson's question is answered (what is left is its Run). */
  lessonAnswered?: boolean;
  /** The open lesson's run a reload interrupted, and its step (the lesson offers Resume). */
  lessonInterrupted?: { label: string; step: number } | null;
  /** The run the charts show (null: none); the live run when it is the same id. */
  viewed: RunHeader | null;
  /** The runs' names as the runs list and the charts show them (by id); absent: the engine's names. */
  names?: ReadonlyMap<string, string>;
}

export interface StatusLine {
  /** Whom the line is about: nothing yet, the engine's live run, or a saved run the charts show. */
  about: 'none' | 'live' | 'viewed';
  /** The run's name (empty when about is 'none'). */
  name: string;
  /** What the run (or the page, with no run) is doing, in words. */
  phase: string;
  /** Step, elapsed, ETA, pace, saved step; or, for a viewed run, where it stopped and its last reward. */
  details: string[];
  /** With a viewed run: what the live run is doing ("another run trains: … · step 12/150"); absent when none is loaded. */
  live?: string;
}

/** The device's start, while it is not ready (null once it is, or when it failed: the adapter line says why). */
export function deviceStartText(gpuStatus: EngineState['gpuStatus']): string | null {
  if (gpuStatus === 'starting') return 'requesting a WebGPU device…';
  return null;
}

/** The background matmul tune in words while it measures or waits (null otherwise). */
export function tuneText(tuneState: EngineState['tuneState'] | undefined): string | null {
  if (tuneState === 'measuring')
    return 'tuning the matmul kernels for this adapter in the background (for the next run)';
  if (tuneState === 'waiting') return 'matmul tune waits until no run is loaded (shipped variants meanwhile)';
  return null;
}

/** A run's phase in words; `step`/`total`: its rollout steps done and planned. */
export function phaseText(phase: RunPhase, status: RunStatus | 'idle', step: number, total: number): string {
  switch (phase.kind) {
    case 'idle':
      return 'no run yet: pick a preset and press Start';
    case 'loading':
      return 'loading the model';
    case 'warming-up': {
      const kernels = `compiling kernels${phase.kernelsCompiled > 0 ? ` (${phase.kernelsCompiled} so far)` : ''}`;
      return phase.evaluatesStep0 ? `evaluating step 0 and ${kernels}` : `${kernels} · step ${step + 1} of ${total}`;
    }
    case 'training':
      return status === 'pausing'
        ? `pausing after step ${step + 1} of ${total}`
        : `training step ${Math.min(step + 1, total)} of ${total}`;
    case 'paused':
      if (phase.by === 'divergence') return `paused at step ${step}: diverged, back at the saved state`;
      if (phase.by === 'alert') return `paused at step ${step} by an alert`;
      return `paused at step ${step}`;
    case 'done':
      return `finished at step ${step}`;
    case 'stopped':
      return `${status} at step ${step}`;
  }
}

/** Where a saved run stands, from its header: "finished at step 150", "interrupted at step 12". */
function savedRunState(h: RunHeader): string {
  if (h.status === 'imported') return `imported · ${h.step} steps`;
  if (h.status === 'done' || h.step >= h.config.steps) return `finished at step ${h.step}`;
  const word: Record<Exclude<RunStatus, 'imported' | 'done'>, string> = {
    loading: 'interrupted',
    running: 'interrupted',
    pausing: 'interrupted',
    paused: 'paused',
    interrupted: 'interrupted',
    failed: 'failed',
  };
  return `${word[h.status]} at step ${h.step} of ${h.config.steps}`;
}

/** The live run's own line: step, elapsed, ETA (from the recent steps' pace only), pace, saved step. */
function liveDetails(p: RunProgress): string[] {
  // The phase names the step under way ("training step 4 of 150"); this counts the steps done.
  const out = [`${p.step} of ${p.totalSteps} done`, `elapsed ${clock(p.elapsedMs)}`];
  const left = timeLeftMs(p.paceMs, p.totalSteps - p.step);
  if ((p.status === 'running' || p.status === 'pausing') && Number.isFinite(left)) out.push(`ETA ${clock(left)}`);
  if (p.paceMs > 0) out.push(throughput(p.paceMs, p.tokensPerSec));
  if (p.savedStep > 0) out.push(`saved at step ${p.savedStep}`);
  return out;
}

/** The status line: about the run the charts show, and what the live run is doing when that is another one. */
export function statusLine({
  progress: p,
  gpuStatus,
  tuneState,
  lessonOpen,
  lessonAnswered,
  lessonInterrupted,
  viewed,
  names,
}: StatusLineInput): StatusLine {
  const line = statusLineOfRun({ progress: p, gpuStatus, viewed, names });
  const idle = line.about !== 'live' && p.phase.kind === 'idle' && !deviceStartText(gpuStatus);
  if (lessonOpen && lessonInterrupted && (idle || p.status === 'interrupted'))
    return {
      about: 'none',
      name: '',
      phase: `the lesson's run "${lessonInterrupted.label}" was interrupted at step ${lessonInterrupted.step} by a reload: Resume it in the lesson`,
      details: [],
    };
  if (lessonOpen && line.about === 'none' && idle)
    line.phase = lessonAnswered
      ? "no run yet: press the lesson's Run"
      : "no run yet: answer the lesson's question, then press its Run";
  const tune = tuneText(tuneState);
  return tune ? { ...line, details: [...line.details, tune] } : line;
}

/** The status line without the background tune. */
function statusLineOfRun({ progress: p, gpuStatus, viewed, names }: StatusLineInput): StatusLine {
  const nameOf = (id: string | null, engineName: string) => (id !== null && names?.get(id)) || engineName;
  const device = deviceStartText(gpuStatus);
  const livePhase =
    device && (p.phase.kind === 'idle' || p.phase.kind === 'loading')
      ? device
      : phaseText(p.phase, p.status, p.step, p.totalSteps);
  if (viewed && viewed.id !== p.runId) {
    const reward = viewed.lastMetrics.reward;
    const details = [savedRunState(viewed)];
    if (viewed.seedGroup) details.push(`seed group: run ${viewed.seedGroup.index + 1} of ${viewed.seedGroup.size}`);
    if (reward !== undefined && Number.isFinite(reward)) details.push(`last reward ${fmt(reward)}`);
    const line: StatusLine = {
      about: 'viewed',
      name: nameOf(viewed.id, viewed.name),
      phase: 'viewing a saved run',
      details,
    };
    if (p.runId) line.live = `live run ${nameOf(p.runId, p.name)}: ${livePhase}`;
    else if (device) line.live = device;
    return line;
  }
  if (!p.runId) return { about: 'none', name: '', phase: livePhase, details: [] };
  return { about: 'live', name: nameOf(p.runId, p.name), phase: livePhase, details: liveDetails(p) };
}

/** The status line of a store's state (the parts RunControls selects: each a stable reference). */
export function statusLineOf(
  s: Pick<LabState, 'progress' | 'gpuStatus' | 'tuneState' | 'lesson' | 'viewRunId' | 'runs' | 'lessonProgress'>,
): StatusLine {
  const interrupted = s.lesson?.phase === 'interrupted' ? lessonInterruptedRun(s as LabState) : null;
  return statusLine({
    progress: s.progress,
    gpuStatus: s.gpuStatus,
    tuneState: s.tuneState,
    lessonOpen: s.lesson !== null,
    lessonAnswered: s.lesson !== null && (s.lessonProgress[s.lesson.lessonId]?.answer ?? null) !== null,
    lessonInterrupted: interrupted && { label: interrupted.label, step: interrupted.header.step },
    viewed: viewedRun(s),
    names: savedRunNames(s.runs),
  });
}

/**
 * The hub download under way, in words, shown apart from the run's phase (compile, training): "downloading org/name:
 * 12.0 MB of 50.0 MB · 2.0 MB/s · 0:19 left"; null when none runs.
 */
export function downloadText(downloads: Readonly<Record<string, HubProgress>>): string | null {
  const p = Object.values(downloads).find((d) => ACTIVE_DOWNLOAD_STATES.includes(d.state));
  if (!p) return null;
  const parts = [
    `${p.state === 'verifying' ? 'verifying' : 'downloading'} ${p.model}: ${formatBytes(p.bytes)}${p.total !== null ? ` of ${formatBytes(p.total)}` : ''}`,
  ];
  if (p.rate > 0) parts.push(`${formatBytes(p.rate)}/s`);
  if (p.etaSeconds !== null) parts.push(`${clock(p.etaSeconds * 1000)} left`);
  return parts.join(' · ');
}
