// The page shell: the lab by default; the kernel self-test at ?selftest; the benchmark panel at ?bench (loaded
// lazily, only there, with its own worker). Starts the engine worker once (not on the bench page) and reads a
// shared link's config before the first render.
import { lazy, Suspense, useEffect, useState, type ComponentType } from 'react';
import { useLab } from '../store';
import { AdapterPanel } from './AdapterPanel';
import { Lab } from './Lab';
import { SelfTest } from './SelfTest';

// The bench panel is another engineer's file and may be absent from a build; import.meta.glob finds it lazily
// when it is there, and the page says so when it is not.
const benchModules = import.meta.glob<{ default: ComponentType }>('./BenchPanel.tsx');
const benchLoader = benchModules['./BenchPanel.tsx'];
const BenchPanel = benchLoader ? lazy(benchLoader) : null;

function Shell({ children }: { children: React.ReactNode }) {
  return (
    <div className="app">
      <header className="app-header">
        <h1>RL Lab</h1>
        <p className="tagline">GRPO, PPO and their relatives, trained live on your GPU. Every kernel is a WGSL compute shader.</p>
      </header>
      <main>{children}</main>
    </div>
  );
}

export function App() {
  const startEngine = useLab((s) => s.startEngine);
  const loadWarmStarts = useLab((s) => s.loadWarmStarts);
  const [page] = useState(() => {
    const params = new URLSearchParams(location.search);
    if (params.has('selftest')) return 'selftest' as const;
    if (params.has('bench')) return 'bench' as const;
    useLab.getState().initConfig(location.search);
    return 'lab' as const;
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
        {BenchPanel ? (
          <Suspense fallback={<p className="hint">Loading the benchmark panel…</p>}>
            <BenchPanel />
          </Suspense>
        ) : (
          <p className="message error" data-testid="bench-missing">
            This build has no benchmark panel (src/ui/BenchPanel.tsx).
          </p>
        )}
      </Shell>
    );
  }
  return <Lab />;
}
