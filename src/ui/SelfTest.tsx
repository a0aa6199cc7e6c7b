// The kernel self-test: runs every WGSL kernel case in the engine worker against its CPU twin and lists
// PASS/FAIL with the error and the time of each.
import { useLab } from '../store';

export function SelfTest() {
  const ready = useLab((s) => s.gpuStatus === 'ready');
  const running = useLab((s) => s.selftestRunning);
  const results = useLab((s) => s.selftestResults);
  const total = useLab((s) => s.selftestTotal);
  const summary = useLab((s) => s.selftestSummary);
  const run = useLab((s) => s.runSelfTest);
  return (
    <section className="panel" aria-labelledby="selftest-title">
      <h2 id="selftest-title">Kernel self-test</h2>
      <p className="hint">
        Each case runs a WGSL kernel on random inputs at an awkward shape and compares it with its CPU twin.
      </p>
      <button type="button" data-testid="selftest-run" disabled={!ready || running} onClick={() => run()}>
        {running ? `Running… ${results.length}/${total || '?'}` : 'Run kernel self-test'}
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
