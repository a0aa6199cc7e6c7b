// The page shell: the lab by default; the kernel self-test at ?selftest; the benchmark panel at ?bench (its code
// and its own worker load lazily, only there, so none of it is on the lab's startup path). Starts the engine
// worker once (not on the bench page) and reads a shared link's config before the first render.
import { lazy, Suspense, useEffect, useState } from 'react';
import { useLab } from '../store';
import { expandLinkState, missingStateText, pageLinkStateStore, REF_PREFIX } from '../store/link-state';
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

/** Whether a query refers to values kept in this browser (link-state.ts REF_PREFIX). */
function hasLinkState(search: string): boolean {
  return [...new URLSearchParams(search).keys()].some((k) => k.startsWith(REF_PREFIX));
}

/** Reads a link with references: the stored values put back, and a notice for those this browser lacks. */
async function readLinkState(search: string): Promise<void> {
  const lab = useLab.getState();
  const { search: expanded, missing, problems } = await expandLinkState(search, pageLinkStateStore());
  lab.initConfig(expanded);
  if (missing.length) lab.addNotice('warning', missingStateText(missing));
  if (problems.length)
    lab.addNotice('warning', `The link's stored-value references are not used: ${problems.join('; ')}.`);
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
  // A link whose long values are kept in this browser (ref.<field>=<hash>, link-state.ts) is read once they are
  // looked up; any other link is read before the first render.
  const [linkRead, setLinkRead] = useState(() => !hasLinkState(location.search));
  const [page] = useState(() => {
    const p = pageOf(location.search);
    if (p === 'lab' && !hasLinkState(location.search)) useLab.getState().initConfig(location.search);
    return p;
  });
  useEffect(() => {
    if (linkRead) return;
    void readLinkState(location.search).then(() => setLinkRead(true));
  }, [linkRead]);
  // The bench page runs its own worker and device; the lab's engine stays off there so it measures alone.
  useEffect(() => {
    if (page !== 'bench') startEngine();
  }, [page, startEngine]);
  useEffect(() => {
    if (page === 'lab') void loadWarmStarts();
  }, [page, loadWarmStarts]);
  if (!linkRead) {
    return (
      <Shell>
        <p className="hint" data-testid="link-state-reading">
          Reading the link's stored values...
        </p>
      </Shell>
    );
  }
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
