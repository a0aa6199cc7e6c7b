// The page shell: the lab by default; the kernel self-test at ?selftest; the benchmark panel at ?bench (its code
// and its own worker load lazily, only there, so none of it is on the lab's startup path). Starts the engine
// worker once (not on the bench page) and reads a shared link's config before the first render.
import { lazy, Suspense, useEffect, useState } from 'react';
import { useLab } from '../store';
import { AdapterPanel } from './AdapterPanel';
import { Lab } from './Lab';
import { PageHeader } from './PageHeader';
import { SelfTest } from './SelfTest';

const BenchPanel = lazy(() => import('./BenchPanel'));

type Page = 'lab' | 'selftest' | 'bench';

/** The page a query asks for: ?selftest, ?bench, else the lab. */
function pageOf(search: string): Page {
  const params = new URLSearchParams(search);
  if (params.has('selftest')) return 'selftest';
  if (params.has('bench')) return 'bench';
  return 'lab';
}

function Shell({ children }: { children: React.ReactNode }) {
  return (
    <div className="app">
      <PageHeader />
      <main>{children}</main>
    </div>
  );
}

export function App() {
  const startEngine = useLab((s) => s.startEngine);
  const loadWarmStarts = useLab((s) => s.loadWarmStarts);
  const [page] = useState(() => {
    const p = pageOf(location.search);
    if (p === 'lab') useLab.getState().initConfig(location.search);
    return p;
  });
  // The bench page runs its own worker and device; the lab's engine stays off there so it measures alone.
  useEffect(() => {
    if (page !== 'bench') startEngine();
  }, [page, startEngine]);
  useEffect(() => {
    if (page === 'lab') void loadWarmStarts();
  }, [page, loadWarmStarts]);
  if (page === 'selftest') {
    return (
      <Shell>
        <AdapterPanel />
        <SelfTest />
      </Shell>
    );
  }
  if (page === 'bench') {
    return (
      <Shell>
        <Suspense fallback={<p className="hint">Loading the benchmark panel…</p>}>
          <BenchPanel />
        </Suspense>
      </Shell>
    );
  }
  return <Lab />;
}
