// A fake engine for store tests: records the requests a store sends (without their ids, as the slices wrote them)
// and plays the worker through the real request channel (src/worker/requests.ts), so an answer reaches the call
// that made the request exactly as it does on the page.

import type { EngineConnector } from './engine-link';
import type { Envelope, Replies, Request, Response } from '../worker/protocol';
import { RequestChannel } from '../worker/requests';

export function fakeEngine() {
  const sent: Request[] = [];
  const envelopes: Envelope[] = [];
  let channel: RequestChannel | null = null;
  const connect: EngineConnector = (onEvent) => {
    channel = new RequestChannel(
      {
        postMessage: (m) => {
          envelopes.push(m);
          const { id, ...request } = m;
          void id;
          sent.push(request as Request);
        },
      },
      onEvent,
    );
    return channel;
  };
  /** Plays the worker: an event, or an answer (with the id of the request it answers). */
  const respond = (r: Response) => {
    if (!channel) throw new Error('the engine was not started');
    channel.receive(r);
  };
  /** The id of the last request of `type` the store sent. */
  const idOf = (type: Request['type']): number => {
    const e = envelopes.findLast((x) => x.type === type);
    if (!e) throw new Error(`no ${type} request was sent`);
    return e.id;
  };
  /** Answers the last request of `type` with its reply. */
  const reply = <T extends Request['type']>(type: T, r: Replies[T]) => respond({ ...r, id: idOf(type) } as Response);
  /** Fails the last request of `type` with `message`. */
  const fail = (type: Request['type'], message: string) =>
    respond({ type: 'error', id: idOf(type), message, fatal: false });
  return { connect, sent, envelopes, respond, reply, fail, idOf };
}

/** Lets promise callbacks of answered requests run. */
export const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
