// The page's side of the engine worker: the only place that calls postMessage. Starts the worker, sends typed
// requests (transferring buffers when asked) each with its own id, settles each caller's promise with its own
// answer (requests.ts), and hands every event to one listener (the store). Also hosts the reward-function
// sandboxes the engine asks for (sandbox-host.ts).

import type { RLConfig } from '../schema/config';
import type { ReplyOf, Request, Response, WorkerEvent } from './protocol';
import { RequestChannel } from './requests';
import { hostSandboxes } from './sandbox-host';

/**
 * The engine client started ahead of the page's app (startEngineWorker), until the app's store connects to it
 * (connectEngine): the events it got meanwhile wait for that listener.
 */
interface EarlyClient {
  client: EngineClient;
  listener: ((e: WorkerEvent) => void) | null;
  waiting: WorkerEvent[];
}
let early: EarlyClient | null = null;

function engineWorker(): Worker {
  return new Worker(new URL('./engine.worker.ts', import.meta.url), { type: 'module', name: 'rl-lab-engine' });
}

/**
 * Starts the engine worker as the page's first act (main.tsx, before the app's bundle loads): the worker's script
 * and its GPU device then load while the page's own code does. Not on the bench page (?bench), which measures on a
 * worker and device of its own, alone.
 */
export function startEngineWorker(search: string): void {
  if (early || new URLSearchParams(search).has('bench')) return;
  const started: EarlyClient = {
    client: new EngineClient((e) => (started.listener ? started.listener(e) : started.waiting.push(e))),
    listener: null,
    waiting: [],
  };
  early = started;
}

/**
 * Asks the early engine worker to prepare the run the opening lesson will (its pipelines compile and its first step
 * trains while the app loads; the app's own prepare of the same config finds it). Best effort: a failure here
 * surfaces, if it matters, when the app starts a run.
 */
export function prepareEarly(config: RLConfig): void {
  early?.client.request({ type: 'prepare', config, backend: 'webgpu' }).catch(() => {});
}

/**
 * The page's engine client, reporting to `onEvent`: the one startEngineWorker started, with the events it got
 * before (delivered after this returns, so the caller holds the connection by then), or a new one.
 */
export function connectEngine(onEvent: (e: WorkerEvent) => void): EngineClient {
  if (!early) return new EngineClient(onEvent);
  const started = early;
  early = null;
  queueMicrotask(() => {
    started.listener = onEvent;
    for (const e of started.waiting.splice(0)) onEvent(e);
  });
  return started.client;
}

export class EngineClient {
  private readonly worker: Worker;
  private readonly channel: RequestChannel;

  constructor(onEvent: (e: WorkerEvent) => void) {
    this.worker = engineWorker();
    this.channel = new RequestChannel(this.worker, onEvent);
    this.worker.onmessage = (ev: MessageEvent<Response>) => {
      const t0 = performance.now();
      this.channel.receive(ev.data);
      // React renders store updates in a microtask queued by the update: this one runs after it, so the
      // user-timing entry covers the message's whole cost on the main thread (profiles show it by type).
      queueMicrotask(() => performance.measure(`message ${ev.data.type}`, { start: t0 }));
    };
    this.worker.onerror = (ev) => {
      const message = `engine worker failed: ${ev.message}`;
      this.channel.failAll(message);
      onEvent({ type: 'error', message, fatal: true });
    };
    // Reward-function sandboxes are started here, under the page's Content-Security-Policy (see sandbox-host.ts).
    const sandboxes = new MessageChannel();
    hostSandboxes(sandboxes.port1);
    this.request({ type: 'sandbox-host', port: sandboxes.port2 }, [sandboxes.port2]).catch((e: unknown) =>
      console.warn(`reward-function sandboxes not connected: ${String(e)}`),
    );
  }

  /** Sends a request; resolves with its own reply, rejects with its own error (a RequestError). */
  request<R extends Request>(request: R, transfer: Transferable[] = []): Promise<ReplyOf<R['type']>> {
    return this.channel.request(request, transfer);
  }

  terminate(): void {
    this.worker.terminate();
  }
}
