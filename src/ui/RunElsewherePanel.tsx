// The "Run elsewhere" panel's frame on the lab page: closed at first; opening it loads its body (RunElsewhere.tsx,
// with the TRL, verl and OpenRLHF generators) on demand, so none of that is on the page's startup path.
import { lazy, Suspense, useState } from 'react';
import { PanelBoundary } from './ErrorBoundary';

const RunElsewhere = lazy(() => import('./RunElsewhere'));

export function RunElsewherePanel() {
  const [open, setOpen] = useState(false);
  return (
    <details
      className="panel run-elsewhere-panel"
      data-testid="run-elsewhere"
      onToggle={(e) => setOpen(e.currentTarget.open)}
    >
      <summary>
        <h2>Run elsewhere</h2>
        <span className="hint">
          this experiment as a TRL script, a verl run or an OpenRLHF command, with its data, reward and the mapping of
          every knob
        </span>
      </summary>
      {open && (
        <PanelBoundary name="run elsewhere">
          <Suspense fallback={<p className="hint">Loading the exports…</p>}>
            <RunElsewhere />
          </Suspense>
        </PanelBoundary>
      )}
    </details>
  );
}
