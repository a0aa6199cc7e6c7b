// The page's side of the engine worker: the only place that calls postMessage. Starts the worker, sends typed
// requests (transferring buffers when asked), and hands every response to one listener (the store).

import type { Request, Response } from './protocol';

export class EngineClient {
  private readonly worker: Worker;

  constructor(onResponse: (r: Response) => void) {
    this.worker = new Worker(new URL('./engine.worker.ts', import.meta.url), { type: 'module', name: 'rl-lab-engine' });
    this.worker.onmessage = (ev: MessageEvent<Response>) => {
      const t0 = performance.now();
      onResponse(ev.data);
      // React renders store updates in a microtask queued by the update: this one runs after it, so the
      // user-timing entry covers the message's whole cost on the main thread (profiles show it by type).
      queueMicrotask(() => performance.measure(`message ${ev.data.type}`, { start: t0 }));
    };
    this.worker.onerror = (ev) => onResponse({ type: 'error', message: `engine worker failed: ${ev.message}`, fatal: true });
  }

  send(request: Request, transfer: Transferable[] = []): void {
    this.worker.postMessage(request, transfer);
  }

  terminate(): void {
    this.worker.terminate();
  }
}
