// The page's side of the reward-function sandbox: the engine worker asks, over a MessagePort, for a dedicated Worker
// whose script is the runner (a Blob) and whose name is the URL of a second Blob, the person's script, which the
// runner loads with importScripts once it has locked its scope down (src/rl/rewards/user-reward.ts). Blob workers take
// their Content-Security-Policy from the document that creates them, so started here they run under the page's
// policy (index.html: scripts only from this site and its own blob: URLs, no eval, connections only to this site):
// the user's code cannot reach the network by `import()` or `Function`, which no deleted global can stop. Started
// by the engine worker they would have that worker's policy, which is none. Messages and errors are relayed as
// they are, each tagged with the sandbox it came from; the engine worker keeps the time limit and checks replies.

import type { SandboxChannel } from '../rl/rewards/user-reward';

/** The two scripts of one sandbox: the runner (the worker's own) and the person's, loaded by the runner. */
export interface SandboxScripts {
  runner: string;
  fn: string;
}

/** Engine worker -> page. */
export type SandboxHostRequest =
  | { op: 'start'; id: number; scripts: SandboxScripts }
  | { op: 'post'; id: number; data: string }
  | { op: 'stop'; id: number };

/** Page -> engine worker. */
export type SandboxHostReply =
  | { id: number; kind: 'message'; data: string }
  | { id: number; kind: 'error'; message: string; line?: number; column?: number };

/** Serves sandbox workers on `port` until the page goes away. */
export function hostSandboxes(port: MessagePort): void {
  const workers = new Map<number, { worker: Worker; urls: string[] }>();
  const stop = (id: number) => {
    const w = workers.get(id);
    if (!w) return;
    w.worker.terminate();
    for (const url of w.urls) URL.revokeObjectURL(url);
    workers.delete(id);
  };
  const blobUrl = (text: string) => URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));
  port.onmessage = (ev: MessageEvent<SandboxHostRequest>) => {
    const req = ev.data;
    if (req.op === 'start') {
      stop(req.id);
      const fnUrl = blobUrl(req.scripts.fn);
      const runnerUrl = blobUrl(req.scripts.runner);
      // The worker's name is the person's script's URL: the runner reads it before anything else runs.
      const worker = new Worker(runnerUrl, { name: fnUrl });
      worker.onmessage = (e: MessageEvent) =>
        port.postMessage({ id: req.id, kind: 'message', data: String(e.data) } satisfies SandboxHostReply);
      worker.onerror = (e: ErrorEvent) => {
        e.preventDefault();
        // Where the worker's own script failed to parse, when it did (the syntax check's answer).
        port.postMessage({
          id: req.id,
          kind: 'error',
          message: e.message,
          ...(e.lineno > 0 && { line: e.lineno, column: e.colno }),
        } satisfies SandboxHostReply);
      };
      workers.set(req.id, { worker, urls: [fnUrl, runnerUrl] });
    } else if (req.op === 'post') workers.get(req.id)?.worker.postMessage(req.data);
    else stop(req.id);
  };
}

/** The engine worker's handle on one hosted sandbox worker, carried over the port. */
export type HostedWorker = SandboxChannel;

/** Starts one sandbox worker running `scripts`. */
export type StartSandbox = (scripts: SandboxScripts) => HostedWorker;

/** Connects the engine worker's side of the port: the returned function asks the page for a sandbox worker. */
export function sandboxClient(port: MessagePort): StartSandbox {
  let next = 0;
  const live = new Map<number, HostedWorker>();
  port.onmessage = (ev: MessageEvent<SandboxHostReply>) => {
    const r = ev.data;
    const w = live.get(r.id);
    if (!w) return;
    if (r.kind === 'message') w.onmessage?.(r.data);
    else w.onerror?.(r.message, r.line !== undefined ? { line: r.line, column: r.column ?? 0 } : undefined);
  };
  return (scripts) => {
    const id = next++;
    const send = (m: SandboxHostRequest) => port.postMessage(m);
    const w: HostedWorker = {
      postMessage: (data) => send({ op: 'post', id, data }),
      terminate: () => {
        live.delete(id);
        send({ op: 'stop', id });
      },
      onmessage: null,
      onerror: null,
    };
    live.set(id, w);
    send({ op: 'start', id, scripts });
    return w;
  };
}
