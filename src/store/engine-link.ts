// The store's line to the engine worker: made once per store (createLabStore), connected by startEngine, and the
// one way the slices send requests. Until it is connected, requests go nowhere (the page has no engine yet).
// The connector is a parameter so tests drive a store with a fake engine instead of a Worker.

import type { Request, Response } from '../worker/protocol';

/** A connected engine: takes requests (the worker client, or a test's fake). */
export interface EngineConnection {
  send(request: Request): void;
}

/** Connects to an engine that reports to `onResponse`. */
export type EngineConnector = (onResponse: (r: Response) => void) => EngineConnection;

export interface EngineLink {
  readonly connected: boolean;
  /** Connects once; false when already connected. */
  connect(onResponse: (r: Response) => void): boolean;
  /** Sends a request when connected; dropped otherwise. */
  send(request: Request): void;
}

export function engineLink(connector: EngineConnector): EngineLink {
  let connection: EngineConnection | null = null;
  return {
    get connected() {
      return connection !== null;
    },
    connect(onResponse) {
      if (connection) return false;
      connection = connector(onResponse);
      return true;
    },
    send(request) {
      connection?.send(request);
    },
  };
}
