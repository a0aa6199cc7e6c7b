// The page's side of the engine worker: the only place that calls postMessage. Starts the worker, sends typed
// requests (transferring buffers when asked), and hands every response to one listener (the store). Also hosts the
// reward-function sandboxes the engine asks for (sandbox-host.ts).

import type { Request, Response } from './protocol';
import { hostSandboxes } from './sandbox-host';

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
    // Reward-function sandboxes are started here, under the page's Content-Security-Policy (see sandbox-host.ts).
    const channel = new MessageChannel();
    hostSandboxes(channel.port1);
    this.send({ type: 'sandbox-host', port: channel.port2 }, [channel.port2]);
  }

  send(request: Request, transfer: Transferable[] = []): void {
    this.worker.postMessage(request, transfer);
  }

  terminate(): void {
    this.worker.terminate();
  }
}
