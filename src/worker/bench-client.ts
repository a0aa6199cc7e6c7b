// The benchmark page's side of its own worker (bench.worker.ts): the messages both sides exchange and the one
// class that posts them. Separate from the lab's engine worker and its protocol: the bench page starts only this.

import type { AdapterReport } from '../gpu';
import type { BenchReport, BenchRow } from '../schema/bench-report';
import type { SuiteSection } from '../bench/suite';
import type { ModelPresetName } from '../schema/model-config';

/** What the page may ask for: runBench's options that make sense in a page. */
export interface BenchRunOptions {
  presets: ModelPresetName[];
  quick: boolean;
  reps?: number;
  sections?: SuiteSection[];
  tfjs: boolean;
  jaxjs: boolean;
  cpuTwin: boolean;
}

export type BenchRequest = { type: 'run'; options: BenchRunOptions } | { type: 'cancel' };

export type BenchResponse =
  | { type: 'ready'; device: string; adapter: AdapterReport }
  | { type: 'unavailable'; message: string }
  | { type: 'progress'; message: string }
  | { type: 'row'; row: BenchRow }
  | { type: 'done'; report: BenchReport; markdown: string; cancelled: boolean }
  | { type: 'error'; message: string };

export class BenchClient {
  private readonly worker: Worker;

  constructor(onResponse: (r: BenchResponse) => void) {
    this.worker = new Worker(new URL('./bench.worker.ts', import.meta.url), { type: 'module', name: 'rl-lab-bench' });
    this.worker.onmessage = (ev: MessageEvent<BenchResponse>) => onResponse(ev.data);
    this.worker.onerror = (ev) => onResponse({ type: 'error', message: `benchmark worker failed: ${ev.message}` });
  }

  run(options: BenchRunOptions): void {
    this.send({ type: 'run', options });
  }

  cancel(): void {
    this.send({ type: 'cancel' });
  }

  terminate(): void {
    this.worker.terminate();
  }

  private send(request: BenchRequest): void {
    this.worker.postMessage(request);
  }
}
