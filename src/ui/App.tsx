// The page shell at this stage: the GPU adapter in use and the kernel self-test. The lab (configuration,
// charts, inspector) replaces the body; the self-test stays reachable at ?selftest.
import { useEffect } from 'react';
import { useLab } from '../store';
import { AdapterPanel } from './AdapterPanel';
import { SelfTest } from './SelfTest';

export function App() {
  const startEngine = useLab((s) => s.startEngine);
  useEffect(() => startEngine(), [startEngine]);
  return (
    <div className="app">
      <header className="app-header">
        <h1>RL Lab</h1>
        <p className="tagline">GRPO, PPO and their relatives, trained live on your GPU. Every kernel is a WGSL compute shader.</p>
      </header>
      <main>
        <AdapterPanel />
        <SelfTest />
      </main>
    </div>
  );
}
