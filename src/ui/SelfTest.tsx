// The kernel self-test: runs every WGSL kernel case in the engine worker against its CPU twin and lists
// PASS/FAIL with the error and the time of each. At /?selftest&sample it runs the representative subset instead
// (each family's first case and every tenth after it: src/kernels/case-sample.ts), as the browser test tier does.
import { useLab } from '../store';

/** Whether the page's query asks for the sampled self-test (?selftest&sample). */
function sampledByQuery(): boolean {
  return new URLSearchParams(globalThis.location?.search ?? '').has('sample');
}

export function SelfTest() {
  const ready = useLab((s) => s.gpuStatus === 'ready');
  const running = useLab((s) => s.selftestRunning);
  const results = useLab((s) => s.selftestResults);
  const total = useLab((s) => s.selftestTotal);
  const summary = useLab((s) => s.selftestSummary);
  const run = useLab((s) => s.runSelfTest);
  const sampled = sampledByQuery();
  return (
    <section className="panel" aria-labelledby="selftest-title">
      <h2 id="selftest-title">Kernel self-test</h2>
      <p className="hint">
        Each case runs a WGSL kernel on random inputs at an awkward shape and compares it with its CPU twin.
        {sampled &&
          ' This page runs a representative sample of each family\'s cases; without "&sample" it runs them all.'}
      </p>
      <button
        type="button"
        data-testid="selftest-run"
        disabled={!ready || running}
        onClick={() => run(undefined, sampled)}
      >
        {running
          ? `Running… ${results.length}/${total || '?'}`
          : sampled
            ? 'Run kernel self-test (sample)'
            : 'Run kernel self-test'}
      </button>
      {summary && (
        <p className={`summary ${summary.failed ? 'fail' : 'pass'}`} data-testid="selftest-summary">
          {summary.passed} passed, {summary.failed} failed in {(summary.ms / 1000).toFixed(1)} s
        </p>
      )}
      {results.length > 0 && (
        <table className="results" data-testid="selftest-table">
          <thead>
            <tr>
              <th>Result</th>
              <th>Case</th>
              <th className="num">ms</th>
              <th>Error vs twin</th>
            </tr>
          </thead>
          <tbody>
            {results.map((r) => (
              <tr key={r.name} data-testid="selftest-row" data-pass={r.pass}>
                <td className={r.pass ? 'pass' : 'fail'}>{r.pass ? 'PASS' : 'FAIL'}</td>
                <td>{r.name}</td>
                <td className="num">{r.ms.toFixed(1)}</td>
                <td className="detail">{r.summary}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
