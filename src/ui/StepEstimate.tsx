// Beside Start: "about N s per step (low-high s) on this adapter (estimate)" for the edited config, from its model's
// config.json alone (the worker sizes it: src/engine/model-estimates.ts, with the adapter's figures measured once by
// the probe: src/engine/adapter-figures.ts), the range being how far measured steps fell from it when calibrated,
// with where the adapter's figures come from and how close the estimate came on the runs measured; and, when the run takes its sampling knobs from the model's
// generation_config.json (sampling_defaults model), which values those are. Asked only once the engine is ready.
import { useEffect } from 'react';
import {
  ESTIMATE_ACCURACY,
  describeSamplingResolution,
  describeSeconds,
  describeSecondsRange,
  resolveSamplingDefaults,
} from '../store/schema';
import { formatBytes } from '../store/format';
import { isEstimate, useLab } from '../store';
import { isBusy } from '../store/selectors';

export function StepEstimateNote() {
  const config = useLab((s) => s.check.config);
  const ready = useLab((s) => s.gpuStatus === 'ready');
  const view = useLab((s) => s.estimates.draft);
  const request = useLab((s) => s.requestEstimates);
  // Asked again when a step stops running: an estimate asked during a run, before the adapter was measured, waits.
  const idle = useLab((s) => !isBusy(s));
  useEffect(() => {
    if (!ready || !config) return;
    // Typing in a field changes the config on every key: ask once it has settled.
    const t = setTimeout(() => request('draft', [config]), 300);
    return () => clearTimeout(t);
  }, [ready, config, request, idle]);
  if (!ready || !config || !view) return null;
  const e = view.estimates[0];
  if (view.error || !e)
    return view.error ? (
      <p className="hint small" data-testid="step-estimate" data-state="error">
        No step estimate: {view.error}
      </p>
    ) : null;
  if (!isEstimate(e))
    return (
      <p className="hint small" data-testid="step-estimate" data-state="problem">
        No step estimate for {e.model}: {e.problem}
      </p>
    );
  const sampling = describeSamplingResolution(resolveSamplingDefaults(config, e.generation));
  const phases = e.phases
    .filter((p) => p.seconds > 0)
    .map((p) => `${p.phase} ${describeSeconds(p.seconds).replace('about ', '')}`)
    .join(', ');
  return (
    <p
      className="hint small"
      data-testid="step-estimate"
      data-state={view.pending ? 'pending' : 'ready'}
      data-seconds={e.seconds}
      data-range={e.range.join(',')}
      title={`${phases}. Adapter figures: ${view.throughput ?? 'unknown'}. ${ESTIMATE_ACCURACY}`}
    >
      {describeSeconds(e.seconds)} per step ({describeSecondsRange(e.range)}) on this adapter (estimate) ·{' '}
      {e.parameters.toLocaleString('en-US')} parameters · peak memory {formatBytes(e.peakBytes)}
      {e.memoryProblems.length > 0 && <strong className="warn"> · does not fit: {e.memoryProblems[0]}</strong>}
      {sampling && (
        <span data-testid="step-estimate-sampling">
          {' '}
          ·{' '}
          {sampling.replace('sampling from generation_config.json', "sampling from the model's generation_config.json")}
        </span>
      )}
    </p>
  );
}
