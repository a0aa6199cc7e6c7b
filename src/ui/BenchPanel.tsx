// The benchmark page (?bench): runs the benchmark suite in its own worker (bench.worker.ts) on this browser's GPU and
// shows each table as its rows arrive: step phases, ours vs TensorFlow.js vs jax-js vs the CPU twin (and our matmul
// vs jax-js's), rollouts, matmul
// variants and every kernel. Local state (not the lab store); its worker client and report types come through
// store/bench.ts. The lab's engine is not involved.

import { useEffect, useMemo, useRef, useState } from 'react';
import {
  BENCH_PRESETS,
  BenchClient,
  rowsOf,
  type BenchReport,
  type BenchResponse,
  type BenchRow,
  type BenchSection,
  type ModelPresetName,
} from '../store/bench';
import { fmtMeasure } from '../store/format';

type Status = 'starting' | 'ready' | 'running' | 'done' | 'unavailable' | 'error';

interface Column {
  head: string;
  num?: boolean;
  cell: (r: BenchRow) => string;
}

const COLUMNS: Record<BenchSection, { title: string; columns: Column[] }> = {
  phase: {
    title: 'Training step by phase',
    columns: [
      { head: 'phase', cell: (r) => r.name },
      { head: 'ms (median)', num: true, cell: (r) => fmtMeasure(r.ms) },
      { head: 'tokens/s', num: true, cell: (r) => fmtMeasure(r.tokensPerS, 0) },
    ],
  },
  compare: {
    title: 'Same model, same batch: ours vs TensorFlow.js vs jax-js vs the CPU twin',
    columns: [
      { head: 'implementation', cell: (r) => r.name },
      { head: 'ms (median)', num: true, cell: (r) => fmtMeasure(r.ms) },
      { head: 'time vs ours', num: true, cell: (r) => (r.vsOurs !== undefined ? `${fmtMeasure(r.vsOurs)}x` : '') },
      { head: 'note', cell: (r) => r.note ?? '' },
    ],
  },
  'matmul-peer': {
    title: 'Same matmul shape and data: ours vs jax-js',
    columns: [
      { head: 'implementation: role', cell: (r) => r.name },
      { head: 'shape', cell: (r) => r.shape ?? '' },
      { head: 'ms (median)', num: true, cell: (r) => fmtMeasure(r.ms, 3) },
      { head: 'GFLOP/s', num: true, cell: (r) => fmtMeasure(r.gflops) },
      { head: 'time vs ours', num: true, cell: (r) => (r.vsOurs !== undefined ? `${fmtMeasure(r.vsOurs)}x` : '') },
    ],
  },
  rollout: {
    title: 'Rollouts',
    columns: [
      { head: 'rollout', cell: (r) => r.name },
      { head: 'shape', cell: (r) => r.shape ?? '' },
      { head: 'ms (median)', num: true, cell: (r) => fmtMeasure(r.ms) },
      { head: 'tokens/s', num: true, cell: (r) => fmtMeasure(r.tokensPerS, 0) },
    ],
  },
  grpo: {
    title: 'One GRPO step of the RL trainer, by phase',
    columns: [
      { head: 'phase', cell: (r) => r.name },
      { head: 'ms (median)', num: true, cell: (r) => fmtMeasure(r.ms) },
      { head: 'note', cell: (r) => r.note ?? '' },
    ],
  },
  autotune: {
    title: 'Matmul variants at the model’s shapes',
    columns: [
      { head: 'variant: role', cell: (r) => r.name },
      { head: 'shape', cell: (r) => r.shape ?? '' },
      { head: 'ms (median)', num: true, cell: (r) => fmtMeasure(r.ms, 3) },
      { head: 'GFLOP/s', num: true, cell: (r) => fmtMeasure(r.gflops) },
      { head: 'note', cell: (r) => r.note ?? '' },
    ],
  },
  kernel: {
    title: 'Every kernel of a training step',
    columns: [
      { head: 'kernel (tensors)', cell: (r) => r.name },
      { head: 'shape', cell: (r) => r.shape ?? '' },
      { head: 'calls/step', num: true, cell: (r) => String(r.perStep ?? 1) },
      { head: 'ms/call', num: true, cell: (r) => fmtMeasure(r.ms, 3) },
      { head: 'ms/step', num: true, cell: (r) => fmtMeasure(r.ms * (r.perStep ?? 1)) },
      { head: 'GFLOP/s', num: true, cell: (r) => fmtMeasure(r.gflops) },
      { head: 'GB/s', num: true, cell: (r) => fmtMeasure(r.gbps) },
    ],
  },
};

function RowsTable({ rows, columns, testId }: { rows: BenchRow[]; columns: Column[]; testId: string }) {
  return (
    <table className="results" data-testid={testId}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.head} className={c.num ? 'num' : undefined}>
              {c.head}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r, i) => (
          <tr key={`${r.name}-${i}`} data-testid="bench-row">
            {columns.map((c) => (
              <td key={c.head} className={c.num ? 'num' : undefined}>
                {c.cell(r)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export default function BenchPanel() {
  const [status, setStatus] = useState<Status>('starting');
  const [device, setDevice] = useState('');
  const [message, setMessage] = useState('');
  const [progress, setProgress] = useState('');
  const [rows, setRows] = useState<BenchRow[]>([]);
  const [report, setReport] = useState<{ report: BenchReport; markdown: string } | null>(null);
  const [presets, setPresets] = useState<ModelPresetName[]>(['nano']);
  const [quick, setQuick] = useState(false);
  const [reps, setReps] = useState(5);
  const [tfjs, setTfjs] = useState(true);
  const [jaxjs, setJaxjs] = useState(true);
  const [cpuTwin, setCpuTwin] = useState(true);
  const client = useRef<BenchClient | null>(null);

  useEffect(() => {
    const onResponse = (r: BenchResponse) => {
      switch (r.type) {
        case 'ready':
          setDevice(r.device);
          setStatus('ready');
          return;
        case 'unavailable':
          setMessage(r.message);
          setStatus('unavailable');
          return;
        case 'progress':
          setProgress(r.message);
          return;
        case 'row':
          setRows((rs) => [...rs, r.row]);
          return;
        case 'done':
          setReport({ report: r.report, markdown: r.markdown });
          setProgress(r.cancelled ? 'cancelled' : `done in ${r.report.totalSeconds.toFixed(0)} s`);
          setStatus('done');
          return;
        case 'error':
          setMessage(r.message);
          setStatus('error');
          return;
      }
    };
    const c = new BenchClient(onResponse);
    client.current = c;
    return () => {
      c.terminate();
      client.current = null;
    };
  }, []);

  const start = () => {
    setRows([]);
    setReport(null);
    setMessage('');
    setProgress('starting');
    setStatus('running');
    client.current?.run({ presets, quick, reps, tfjs, jaxjs, cpuTwin });
  };

  const byPreset = useMemo(() => [...new Set(rows.map((r) => r.preset))], [rows]);
  const canRun = status === 'ready' || status === 'done' || status === 'error';

  return (
    <section className="panel" aria-labelledby="bench-title" data-testid="bench-panel">
      <h2 id="bench-title">Benchmark</h2>
      <p className="hint">
        The same suite as <code>npm run bench</code>, on this browser’s GPU: a training step by phase, the same step in
        TensorFlow.js and jax-js (WebGPU, same device) and in the CPU twin, our matmul against jax-js’s, rollouts, and
        every kernel. Medians after warm-up; compare ratios within one run. A software adapter (SwiftShader) is
        100-1000x slower than a GPU.
      </p>
      <p className="adapter-line" data-testid="bench-device">
        {status === 'starting' ? 'Acquiring a GPU device…' : device}
      </p>
      <div className="controls">
        <fieldset disabled={!canRun} style={{ border: 0, padding: 0, margin: '8px 0' }}>
          <span>Presets: </span>
          {BENCH_PRESETS.map((p) => (
            <label key={p} style={{ marginRight: 10 }}>
              <input
                type="checkbox"
                checked={presets.includes(p)}
                onChange={(e) =>
                  setPresets((ps) =>
                    e.target.checked
                      ? BENCH_PRESETS.filter((x) => x === p || ps.includes(x))
                      : ps.filter((x) => x !== p),
                  )
                }
              />{' '}
              {p}
            </label>
          ))}
          <br />
          <label style={{ marginRight: 10 }}>
            <input
              type="checkbox"
              checked={quick}
              onChange={(e) => setQuick(e.target.checked)}
              data-testid="bench-quick"
            />{' '}
            quick (tiny shapes)
          </label>
          <label style={{ marginRight: 10 }}>
            repetitions{' '}
            <input
              type="number"
              min={1}
              max={50}
              value={reps}
              onChange={(e) => setReps(Math.max(1, Math.min(50, Number(e.target.value) || 1)))}
              style={{ width: 50 }}
            />
          </label>
          <label style={{ marginRight: 10 }}>
            <input type="checkbox" checked={tfjs} onChange={(e) => setTfjs(e.target.checked)} /> TensorFlow.js peer
          </label>
          <label style={{ marginRight: 10 }}>
            <input type="checkbox" checked={jaxjs} onChange={(e) => setJaxjs(e.target.checked)} /> jax-js peer
          </label>
          <label>
            <input type="checkbox" checked={cpuTwin} onChange={(e) => setCpuTwin(e.target.checked)} /> CPU twin
          </label>
        </fieldset>
        <div className="buttons">
          <button type="button" data-testid="bench-run" disabled={!canRun || presets.length === 0} onClick={start}>
            {status === 'running' ? 'Running…' : 'Run benchmark'}
          </button>
          <button type="button" disabled={status !== 'running'} onClick={() => client.current?.cancel()}>
            Cancel
          </button>
          <button
            type="button"
            disabled={!report}
            onClick={() =>
              report && download('rl-lab-bench.json', JSON.stringify(report.report, null, 1), 'application/json')
            }
          >
            Download JSON
          </button>
          <button
            type="button"
            disabled={!report}
            onClick={() => report && download('rl-lab-bench.md', report.markdown, 'text/markdown')}
          >
            Download Markdown
          </button>
        </div>
      </div>
      {progress && (
        <p className="status-line" data-testid="bench-progress">
          {progress}
        </p>
      )}
      {message && <p className="message error">{message}</p>}
      {report?.report.notes.map((n) => (
        <p key={n} className="hint">
          note: {n}
        </p>
      ))}
      {report?.report.peak && (
        <p className="hint" data-testid="bench-peak">
          Measured arithmetic peak of this adapter (register-only multiply-adds):{' '}
          {fmtMeasure(report.report.peak.gflops)} GFLOP/s
        </p>
      )}
      {report?.report.autotune && (
        <p className="hint" data-testid="bench-autotune">
          Matmul autotune:{' '}
          {Object.entries(report.report.autotune.tuning)
            .map(([l, v]) => `${l} ${v}`)
            .join(', ') || 'none'}
        </p>
      )}
      {byPreset.map((preset) => (
        <div key={preset}>
          <h3>{preset}</h3>
          {(Object.keys(COLUMNS) as (keyof typeof COLUMNS)[]).map((section) => {
            const sectionRows = rowsOf(rows, preset, section);
            if (sectionRows.length === 0) return null;
            const shown =
              section === 'kernel'
                ? [...sectionRows].sort((a, b) => b.ms * (b.perStep ?? 1) - a.ms * (a.perStep ?? 1))
                : sectionRows;
            return (
              <div key={section}>
                <h4>{COLUMNS[section].title}</h4>
                <RowsTable rows={shown} columns={COLUMNS[section].columns} testId={`bench-${section}`} />
              </div>
            );
          })}
        </div>
      ))}
    </section>
  );
}
