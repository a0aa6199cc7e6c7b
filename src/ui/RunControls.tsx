// Run controls and the status line: start (or continue), pause, single step, reset; the status line about the run
// the charts show (its phase, step, elapsed time, ETA and pace; store/status-line.ts words it); the adapter it runs on, with a note when that is a software fallback; resume
// for a run that was interrupted (device loss, reload) or failed; the edited config over N seeds as a seed group
// (queued run after run; the status line says which seed of the group trains). Which button is enabled is the
// store's selectors (store/selectors.ts), the same rules the store's actions check.
import { SEED_GROUP_MAX, SEED_GROUP_MIN, useLab } from '../store';
import { describeAdapter } from '../store/format';
import {
  activeBackend,
  canPause,
  canReset,
  canResumeCurrent,
  canStart,
  canStep,
  startBlocker,
  startLabel,
  type StartBlocker,
} from '../store/selectors';
import { deviceStartText, downloadText, statusLineOf } from '../store/status-line';
import { speedrunLineOf } from '../store/speedrun';
import { StepEstimateNote } from './StepEstimate';

/** Why Start and Step are greyed out, as their tooltip. */
const BLOCKED: Record<StartBlocker, string> = {
  lesson: "a lesson is open: its own Run starts the lesson's runs",
  busy: 'the current run is busy',
  engine: 'the engine is not ready',
  config: 'the config has errors',
};

/** The edited config over N seeds, one run after the other on this device. */
function SeedGroupControl() {
  const count = useLab((s) => s.seedCount);
  const setCount = useLab((s) => s.setSeedCount);
  const startSeedGroup = useLab((s) => s.startSeedGroup);
  const blocker = useLab(startBlocker);
  return (
    <span className="seed-controls">
      <button
        type="button"
        className="secondary"
        data-testid="seeds-start"
        disabled={blocker !== null}
        onClick={startSeedGroup}
        title={
          blocker
            ? BLOCKED[blocker]
            : `the edited config over ${count} seeds (its seed, seed + 1, ...), one run after the other; the charts draw the median across seeds with a bootstrap band`
        }
      >
        Run over seeds
      </button>
      {/* A list rather than a number field: every choice is a valid group size. */}
      <select
        value={count}
        data-testid="seed-count"
        aria-label="number of seeds"
        onChange={(e) => setCount(Number(e.target.value))}
      >
        {Array.from({ length: SEED_GROUP_MAX - SEED_GROUP_MIN + 1 }, (_, i) => SEED_GROUP_MIN + i).map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <span className="hint small">seeds</span>
    </span>
  );
}

function AdapterNote() {
  const adapter = useLab((s) => s.adapter);
  const backend = useLab(activeBackend);
  const gpuStatus = useLab((s) => s.gpuStatus);
  if (backend === 'cpu')
    return <span data-testid="status-adapter">CPU reference backend (slow: 100-1000x slower than a GPU)</span>;
  if (!adapter) return <span data-testid="status-adapter">{deviceStartText(gpuStatus) ?? 'no WebGPU adapter'}</span>;
  return (
    <span data-testid="status-adapter" data-fallback={adapter.isFallbackAdapter}>
      {describeAdapter(adapter)}
      {adapter.isFallbackAdapter && <strong className="warn"> · software fallback: expect seconds per step</strong>}
    </span>
  );
}

/** While a lesson is open, Start, Step and Run over seeds are off: why, and the way back to one's own config. */
function LessonOpenHint() {
  const closeLesson = useLab((s) => s.closeLesson);
  return (
    <p className="hint small" data-testid="run-start-blocked">
      A lesson is open: its <strong>Run</strong> (in Lessons) starts its runs, after your prediction.{' '}
      <button type="button" className="link" data-testid="run-close-lesson" onClick={closeLesson}>
        Close the lesson
      </button>{' '}
      to start your own config here.
    </p>
  );
}

export function RunControls() {
  const p = useLab((s) => s.progress);
  const startEnabled = useLab(canStart);
  const stepEnabled = useLab(canStep);
  const pauseEnabled = useLab(canPause);
  const resetEnabled = useLab(canReset);
  const resumable = useLab(canResumeCurrent);
  const blocker = useLab(startBlocker);
  const label = useLab(startLabel);
  const gpuStatus = useLab((s) => s.gpuStatus);
  const tuneState = useLab((s) => s.tuneState);
  const lesson = useLab((s) => s.lesson);
  const viewRunId = useLab((s) => s.viewRunId);
  const runs = useLab((s) => s.runs);
  const lessonProgress = useLab((s) => s.lessonProgress);
  const line = statusLineOf({ progress: p, gpuStatus, tuneState, lesson, viewRunId, runs, lessonProgress });
  const speedrun = useLab((s) =>
    speedrunLineOf(s, line.about === 'viewed' ? viewRunId : line.about === 'live' ? p.runId : null),
  );
  const download = downloadText(useLab((s) => s.hubDownloads));
  const startRun = useLab((s) => s.startRun);
  const pauseRun = useLab((s) => s.pauseRun);
  const stepRun = useLab((s) => s.stepRun);
  const resetRun = useLab((s) => s.resetRun);
  const resumeRun = useLab((s) => s.resumeRun);
  return (
    <section className="panel controls" aria-labelledby="controls-title">
      <h2 id="controls-title" className="sr-only">
        Run
      </h2>
      <div className="buttons">
        <button
          type="button"
          data-testid="run-start"
          disabled={!startEnabled}
          onClick={startRun}
          title={blocker ? BLOCKED[blocker] : ''}
        >
          {label}
        </button>
        <button type="button" data-testid="run-pause" disabled={!pauseEnabled} onClick={pauseRun}>
          {p.status === 'pausing' ? 'Pausing…' : 'Pause'}
        </button>
        <button
          type="button"
          data-testid="run-step"
          disabled={!stepEnabled}
          onClick={stepRun}
          title={blocker ? BLOCKED[blocker] : 'one rollout batch and its optimizer steps, then pause'}
        >
          Step
        </button>
        <button
          type="button"
          className="secondary"
          data-testid="run-reset"
          disabled={!resetEnabled}
          onClick={resetRun}
          title="drop the trainer; the run stays saved"
        >
          Reset
        </button>
        <SeedGroupControl />
        {resumable && p.runId && (
          <button type="button" data-testid="run-resume" onClick={() => resumeRun(p.runId!)}>
            Resume from step {p.savedStep}
          </button>
        )}
      </div>
      {blocker === 'lesson' && <LessonOpenHint />}
      {blocker !== 'lesson' && <StepEstimateNote />}
      <p
        className="status-line"
        data-testid="run-status"
        data-status={p.status}
        data-step={p.step}
        data-total={p.totalSteps}
        data-run-id={p.runId ?? ''}
        data-phase={p.phase.kind}
        data-tune={tuneState ?? ''}
      >
        {line.name && <strong data-testid="status-name">{line.name}</strong>}
        {line.name && ' · '}
        <span data-testid="status-phase" data-about={line.about}>
          {line.phase}
        </span>
        {line.details.map((d) => (
          <span key={d}> · {d}</span>
        ))}
        {speedrun && <span data-testid="status-speedrun"> · {speedrun}</span>}
        {line.live && <span data-testid="status-live"> · {line.live}</span>}
        {download && <span data-testid="status-download"> · {download}</span>}
        {/* The live run's seed group, at the end whichever run the line is about (the live part names the live run). */}
        {p.seedQueue && (
          <span data-testid="status-seed-queue" data-index={p.seedQueue.index} data-size={p.seedQueue.size}>
            {' '}
            (seed group: run {p.seedQueue.index + 1} of {p.seedQueue.size}
            {p.seedQueue.failedSeeds.length > 0 && <>; failed: seed {p.seedQueue.failedSeeds.join(', ')}</>})
          </span>
        )}
      </p>
      {p.message && (p.status === 'interrupted' || p.status === 'failed' || p.status === 'paused') && (
        <p className="message error" role="alert" data-testid="run-message">
          {p.message}
        </p>
      )}
      <p className="adapter-line">
        <AdapterNote />
      </p>
    </section>
  );
}
