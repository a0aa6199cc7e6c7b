// The page's half of request ids: allocates an id for each request, keeps id -> caller while it is in flight, and
// settles each caller's promise with its own answer (the reply, or a RequestError from the worker's 'error' with
// that id). Messages without an id are events and go to the one listener. Knows nothing of Worker, so a test
// drives it with a fake port; the engine client (client.ts) puts it on the worker.

import type { Envelope, Reply, ReplyOf, Request, Response, WorkerEvent } from './protocol';

/** Where envelopes go: the Worker, or a test's fake. */
export interface RequestPort {
  postMessage(message: Envelope, transfer: Transferable[]): void;
}

/** A request the worker answered with an error (or that was in flight when the worker failed). */
export class RequestError extends Error {
  constructor(
    readonly request: Request['type'],
    message: string,
    readonly fatal: boolean,
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

interface Pending {
  type: Request['type'];
  resolve(reply: Reply): void;
  reject(error: RequestError): void;
}

export class RequestChannel {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(
    private readonly port: RequestPort,
    private readonly onEvent: (event: WorkerEvent) => void,
  ) {}

  /** Sends `request` with a fresh id; resolves with the reply carrying that id, rejects with its error. */
  request<R extends Request>(request: R, transfer: Transferable[] = []): Promise<ReplyOf<R['type']>> {
    const id = this.nextId++;
    return new Promise<ReplyOf<R['type']>>((resolve, reject) => {
      this.pending.set(id, { type: request.type, resolve: resolve as (reply: Reply) => void, reject });
      try {
        this.port.postMessage({ ...request, id }, transfer);
      } catch (e) {
        this.pending.delete(id);
        reject(new RequestError(request.type, e instanceof Error ? e.message : String(e), false));
      }
    });
  }

  /** One message of the worker: an answer settles its own caller's promise; an event goes to the listener. */
  receive(message: Response): void {
    if (!('id' in message)) return this.onEvent(message);
    const p = this.pending.get(message.id);
    // Nobody waits for it (failed when the worker did): nothing to settle.
    if (!p) return;
    this.pending.delete(message.id);
    if (message.type === 'error') p.reject(new RequestError(p.type, message.message, message.fatal));
    else p.resolve(message);
  }

  /** Fails every request in flight: the worker is gone and will answer none of them. */
  failAll(message: string): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(new RequestError(p.type, message, true));
  }

  /** How many requests await their answer. */
  get inFlight(): number {
    return this.pending.size;
  }
}
