// The page's side of the reward-function sandbox: the engine worker asks, over a MessagePort, for a dedicated Worker
// made from a Blob of the sandbox's script, and the page starts it. A Blob worker takes its Content-Security-Policy
// from the document that creates it, so started here it runs under the page's policy (index.html: scripts only from
// this site, no eval, connections only to this site): the user's code cannot reach the network by `import()` or
// `Function`, which no deleted global can stop. Started by the engine worker it would have that worker's policy,
// which is none. Messages and errors (with their line) are relayed as they are; the engine worker keeps the time limit.

/** Engine worker -> page. */
export type SandboxHostRequest =
  | { op: 'start'; id: number; script: string }
  | { op: 'post'; id: number; data: string }
  | { op: 'stop'; id: number };

/** Page -> engine worker. */
export type SandboxHostReply =
  | { id: number; kind: 'message'; data: string }
  | { id: number; kind: 'error'; message: string; lineno: number };

/** Serves sandbox workers on `port` until the page goes away. */
export function hostSandboxes(port: MessagePort): void {
  const workers = new Map<number, { worker: Worker; url: string }>();
  const stop = (id: number) => {
    const w = workers.get(id);
    if (!w) return;
    w.worker.terminate();
    URL.revokeObjectURL(w.url);
    workers.delete(id);
  };
  port.onmessage = (ev: MessageEvent<SandboxHostRequest>) => {
    const req = ev.data;
    if (req.op === 'start') {
      stop(req.id);
      const url = URL.createObjectURL(new Blob([req.script], { type: 'text/javascript' }));
      const worker = new Worker(url, { name: 'rl-lab-reward-fn' });
      worker.onmessage = (e: MessageEvent) =>
        port.postMessage({ id: req.id, kind: 'message', data: String(e.data) } satisfies SandboxHostReply);
      worker.onerror = (e: ErrorEvent) => {
        e.preventDefault();
        port.postMessage({
          id: req.id,
          kind: 'error',
          message: e.message,
          lineno: e.lineno,
        } satisfies SandboxHostReply);
      };
      workers.set(req.id, { worker, url });
    } else if (req.op === 'post') workers.get(req.id)?.worker.postMessage(req.data);
    else stop(req.id);
  };
}

/**
 * The engine worker's handle on one hosted sandbox worker: the part of the Worker API the sandbox uses, carried
 * over the port.
 */
export interface HostedWorker {
  postMessage(data: string): void;
  terminate(): void;
  onmessage: ((data: string) => void) | null;
  onerror: ((message: string, lineno: number) => void) | null;
}

/** Connects the engine worker's side of the port: `start` asks the page for a sandbox worker running `script`. */
export function sandboxClient(port: MessagePort): (script: string) => HostedWorker {
  let next = 0;
  const live = new Map<number, HostedWorker>();
  port.onmessage = (ev: MessageEvent<SandboxHostReply>) => {
    const r = ev.data;
    const w = live.get(r.id);
    if (!w) return;
    if (r.kind === 'message') w.onmessage?.(r.data);
    else w.onerror?.(r.message, r.lineno);
  };
  return (script) => {
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
    send({ op: 'start', id, script });
    return w;
  };
}
