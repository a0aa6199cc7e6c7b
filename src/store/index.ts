// The lab's one zustand store, built from typed slices. Actions are callable outside React (the engine client
// feeds responses in through `handleResponse`), and components select single fields.

import { create } from 'zustand';
import type { AdapterReport } from '../gpu/adapter';
import type { CaseResult } from '../kernels/verify';
import { EngineClient } from '../worker/client';
import { assertNever, type Response } from '../worker/protocol';

export interface GpuSlice {
  gpuStatus: 'idle' | 'starting' | 'ready' | 'unavailable' | 'error';
  adapter: AdapterReport | null;
  /** The last error or the reason WebGPU is unavailable, shown as is. */
  gpuMessage: string | null;
}

export interface SelfTestSlice {
  selftestRunning: boolean;
  selftestResults: CaseResult[];
  selftestTotal: number;
  selftestSummary: { passed: number; failed: number; ms: number } | null;
}

export interface Actions {
  startEngine(): void;
  runSelfTest(filter?: string): void;
  handleResponse(r: Response): void;
}

export type LabState = GpuSlice & SelfTestSlice & Actions;

let client: EngineClient | null = null;

export const useLab = create<LabState>()((set, get) => ({
  gpuStatus: 'idle',
  adapter: null,
  gpuMessage: null,
  selftestRunning: false,
  selftestResults: [],
  selftestTotal: 0,
  selftestSummary: null,

  startEngine() {
    if (client) return;
    set({ gpuStatus: 'starting', gpuMessage: null });
    client = new EngineClient((r) => get().handleResponse(r));
    client.send({ type: 'init' });
  },

  runSelfTest(filter) {
    if (!client || get().gpuStatus !== 'ready' || get().selftestRunning) return;
    set({ selftestRunning: true, selftestResults: [], selftestSummary: null, selftestTotal: 0 });
    client.send({ type: 'selftest', filter });
  },

  handleResponse(r) {
    switch (r.type) {
      case 'ready':
        return set({ gpuStatus: 'ready', adapter: r.report });
      case 'unavailable':
        return set({ gpuStatus: 'unavailable', gpuMessage: r.message });
      case 'selftest-case':
        return set((s) => ({ selftestResults: [...s.selftestResults, r.result], selftestTotal: r.total }));
      case 'selftest-done':
        return set({ selftestRunning: false, selftestSummary: { passed: r.passed, failed: r.failed, ms: r.ms } });
      case 'error':
        return set((s) => ({
          gpuMessage: r.message,
          gpuStatus: r.fatal ? 'error' : s.gpuStatus,
          // Any error ends a running self-test: the worker sends no "done" after a failed request.
          selftestRunning: false,
        }));
      default:
        return assertNever(r);
    }
  },
}));
