// Run controls and the status line: start (or continue), pause, single step, reset; step, elapsed time, ETA and
// throughput of the current run; the adapter it runs on, with a note when that is a software fallback; resume
// for a run that was interrupted (device loss, reload) or failed.
import { describeAdapter } from '../gpu/adapter';
import { useLab, sameConfig } from '../store';

/** 75 s -> "1:15", 3725 s -> "1:02:05". */
export function clock(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

function AdapterNote() {
  const adapter = useLab((s) => s.adapter);
  const backend = useLab((s) => s.progress.runId ? s.progress.backend : s.backend);
  const gpuStatus = useLab((s) => s.gpuStatus);
  if (backend === 'cpu') return <span data-testid="status-adapter">CPU reference backend (slow: 100-1000x slower than a GPU)</span>;
  if (!adapter) return <span data-testid="status-adapter">{gpuStatus === 'starting' ? 'requesting a WebGPU device…' : 'no WebGPU adapter'}</span>;
  return (
    <span data-testid="status-adapter" data-fallback={adapter.isFallbackAdapter}>
      {describeAdapter(adapter)}
      {adapter.isFallbackAdapter && <strong className="warn"> · software fallback: expect seconds per step</strong>}
    </span>
  );
}

export function RunControls() {
  const p = useLab((s) => s.progress);
  const runs = useLab((s) => s.runs);
  const config = useLab((s) => s.check.config);
  const gpuStatus = useLab((s) => s.gpuStatus);
  const backend = useLab((s) => s.backend);
  const startRun = useLab((s) => s.startRun);
  const pauseRun = useLab((s) => s.pauseRun);
  const stepRun = useLab((s) => s.stepRun);
  const resetRun = useLab((s) => s.resetRun);
  const resumeRun = useLab((s) => s.resumeRun);
  const current = runs.find((r) => r.id === p.runId);
  const busy = p.status === 'running' || p.status === 'pausing' || p.status === 'loading';
  const canContinue = p.status === 'paused' && !!current && !!config && sameConfig(current.config, config);
  const engineReady = backend === 'cpu' ? gpuStatus !== 'idle' && gpuStatus !== 'starting' : gpuStatus === 'ready';
  const left = Math.max(0, p.totalSteps - p.step);
  const eta = p.meanStepMs > 0 ? left * p.meanStepMs : NaN;
  const startLabel = canContinue ? 'Continue' : p.status === 'paused' ? 'Start new run' : 'Start';
  return (
    <section className="panel controls" aria-labelledby="controls-title">
      <h2 id="controls-title" className="sr-only">
        Run
      </h2>
      <div className="buttons">
        <button type="button" data-testid="run-start" disabled={busy || !config || !engineReady} onClick={startRun} title={config ? '' : 'the config has errors'}>
          {startLabel}
        </button>
        <button type="button" data-testid="run-pause" disabled={p.status !== 'running'} onClick={pauseRun}>
          {p.status === 'pausing' ? 'Pausing…' : 'Pause'}
        </button>
        <button type="button" data-testid="run-step" disabled={busy || !config || !engineReady} onClick={stepRun} title="one rollout batch and its optimizer steps, then pause">
          Step
        </button>
        <button type="button" className="secondary" data-testid="run-reset" disabled={!p.runId} onClick={resetRun} title="drop the trainer; the run stays saved">
          Reset
        </button>
        {(p.status === 'interrupted' || p.status === 'failed') && p.runId && (
          <button type="button" data-testid="run-resume" onClick={() => resumeRun(p.runId!)}>
            Resume from step {p.savedStep}
          </button>
        )}
      </div>
      <p className="status-line" data-testid="run-status" data-status={p.status} data-step={p.step} data-total={p.totalSteps} data-run-id={p.runId ?? ''}>
        {p.runId ? (
          <>
            <strong>{p.name}</strong> · <span data-testid="status-state">{p.status}</span> · step {p.step}/{p.totalSteps} · elapsed {clock(p.elapsedMs)}
            {p.status === 'running' && <> · ETA {clock(eta)}</>}
            {p.meanStepMs > 0 && (
              <>
                {' '}
                · {(p.meanStepMs / 1000).toFixed(p.meanStepMs < 10_000 ? 2 : 1)} s/step · {p.tokensPerSec.toFixed(p.tokensPerSec < 100 ? 1 : 0)} tokens/s
              </>
            )}
            {p.savedStep > 0 && <> · saved at step {p.savedStep}</>}
          </>
        ) : (
          <>no run yet: pick a preset and press Start</>
        )}
      </p>
      {p.message && (p.status === 'interrupted' || p.status === 'failed') && (
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
