// Shows the WebGPU adapter the engine runs on, or why there is none and what to do about it (which browsers,
// which flag), and that the lab then runs on the slow CPU backend for the smallest models. `compact` folds the
// adapter's details away (the lab's sidebar); the self-test page shows them open.
import { useLab } from '../store';
import { formatBytes } from '../store/format';
import { deviceStartText } from '../store/status-line';

export function AdapterPanel({ compact = false }: { compact?: boolean }) {
  const status = useLab((s) => s.gpuStatus);
  const adapter = useLab((s) => s.adapter);
  const message = useLab((s) => s.gpuMessage);
  const tuning = useLab((s) => s.tuning);
  const details = adapter && (
    <dl className="facts" data-testid="adapter-info">
      <dt>Adapter</dt>
      <dd data-testid="adapter-name">
        {[adapter.vendor, adapter.architecture, adapter.description].filter((s) => s && s !== 'unknown').join(' · ') ||
          'unknown'}
      </dd>
      <dt>Kind</dt>
      <dd data-testid="adapter-kind">
        {adapter.isFallbackAdapter ? 'software fallback (correct, but 100-1000x slower than a GPU)' : 'hardware GPU'}
      </dd>
      <dt>Features</dt>
      <dd>
        {adapter.features.length ? adapter.features.join(', ') : 'none of shader-f16, subgroups, timestamp-query'}
      </dd>
      <dt>Max storage binding</dt>
      <dd>{formatBytes(adapter.limits.maxStorageBufferBindingSize)}</dd>
      <dt>Max buffer</dt>
      <dd>{formatBytes(adapter.limits.maxBufferSize)}</dd>
      <dt>Workgroup storage</dt>
      <dd>{formatBytes(adapter.limits.maxComputeWorkgroupStorageSize)}</dd>
      <dt>Invocations / workgroup</dt>
      <dd>{adapter.limits.maxComputeInvocationsPerWorkgroup}</dd>
      {tuning && (
        <>
          <dt>Kernels</dt>
          <dd data-testid="adapter-tuning">{tuning}</dd>
        </>
      )}
    </dl>
  );
  return (
    <section className="panel" aria-labelledby="adapter-title" data-testid="gpu-panel" data-state={status}>
      <h2 id="adapter-title">GPU</h2>
      {deviceStartText(status) && <p data-testid="adapter-status">{deviceStartText(status)}</p>}
      {status === 'unavailable' && (
        <>
          <p className="message error" data-testid="adapter-status" role="alert">
            No WebGPU here. {message}
          </p>
          <p className="hint" data-testid="cpu-offer">
            You can still train on the CPU backend (the CPU twins of every kernel), selected for you below: it is
            100-1000x slower than a GPU, so it is offered for the nano and micro models with small batches only.
          </p>
        </>
      )}
      {status === 'error' && (
        <p className="message error" data-testid="adapter-status" role="alert">
          {message}
        </p>
      )}
      {adapter && compact && (
        <details>
          <summary data-testid="adapter-summary">
            {adapter.isFallbackAdapter ? 'Software fallback adapter (slow)' : 'Hardware GPU'}: {adapter.vendor}{' '}
            {adapter.architecture}
          </summary>
          {details}
        </details>
      )}
      {adapter && !compact && details}
      {status === 'ready' && message && (
        <p className="message error" role="alert">
          {message}
        </p>
      )}
    </section>
  );
}
