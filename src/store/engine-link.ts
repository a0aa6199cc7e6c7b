// The store's line to the engine worker: made once per store (createLabStore), connected by startEngine, and the
// one way the slices send requests. Each request gets its own answer: `request` returns it as a promise (the
// reply, or a RequestError with the worker's message), so a slice routes a failure by the call that made it, never
// by the request's type; `send` is for requests whose failure is just shown (it becomes an error event).
// Until it is connected, requests go nowhere (the page has no engine yet) and their promises never settle.
// The connector is a parameter so tests drive a store with a fake engine instead of a Worker.

import type { ReplyOf, Request, WorkerEvent } from '../worker/protocol';

/** A connected engine: takes requests and answers each (the worker client, or a test's fake). */
export interface EngineConnection {
  request<R extends Request>(request: R, transfer?: Transferable[]): Promise<ReplyOf<R['type']>>;
}

/** Connects to an engine that reports its events to `onEvent`. */
export type EngineConnector = (onEvent: (e: WorkerEvent) => void) => EngineConnection;

export interface EngineLink {
  readonly connected: boolean;
  /** Connects once; false when already connected. */
  connect(onEvent: (e: WorkerEvent) => void): boolean;
  /** Sends a request and resolves with its own reply (rejects with its own error); never settles when not connected. */
  request<R extends Request>(request: R, transfer?: Transferable[]): Promise<ReplyOf<R['type']>>;
  /** Sends a request whose reply nobody needs; a failure reaches the event listener as a non-fatal error. */
  send(request: Request, transfer?: Transferable[]): void;
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function engineLink(connector: EngineConnector): EngineLink {
  let connection: EngineConnection | null = null;
  let events: ((e: WorkerEvent) => void) | null = null;
  const link: EngineLink = {
    get connected() {
      return connection !== null;
    },
    connect(onEvent) {
      if (connection) return false;
      events = onEvent;
      connection = connector(onEvent);
      return true;
    },
    request(request, transfer) {
      return connection ? connection.request(request, transfer) : new Promise(() => {});
    },
    send(request, transfer) {
      link.request(request, transfer).catch((e: unknown) =>
        events?.({
          type: 'error',
          message: messageOf(e),
          fatal: e instanceof Error && 'fatal' in e ? Boolean(e.fatal) : false,
        }),
      );
    },
  };
  return link;
}
