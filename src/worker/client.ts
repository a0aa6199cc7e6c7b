// The page's side of the engine worker: the only place that calls postMessage. Starts the worker, sends typed
// requests (transferring buffers when asked), and hands every response to one listener (the store).

import type { Request, Response } from './protocol';

export class EngineClient {
  private readonly worker: Worker;

  constructor(onResponse: (r: Response) => void) {
    this.worker = new Worker(new URL('./engine.worker.ts', import.meta.url), { type: 'module', name: 'rl-lab-engine' });
    this.worker.onmessage = (ev: MessageEvent<Response>) => onResponse(ev.data);
    this.worker.onerror = (ev) => onResponse({ type: 'error', message: `engine worker failed: ${ev.message}`, fatal: true });
  }

  send(request: Request, transfer: Transferable[] = []): void {
    this.worker.postMessage(request, transfer);
  }

  terminate(): void {
    this.worker.terminate();
  }
}
