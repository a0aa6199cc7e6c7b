// Request ids end to end on the page's side: the channel numbers each request, and each answer settles only the
// caller whose id it carries, whatever order the worker answers in; events reach the listener; a dead worker fails
// every request in flight.
import { describe, expect, it } from 'vitest';
import type { RunHeader } from '../schema/run-types';
import { resolveConfig } from '../schema/config';
import type { Envelope, Response, WorkerEvent } from './protocol';
import { RequestChannel, RequestError } from './requests';

function channel() {
  const posted: Envelope[] = [];
  const events: WorkerEvent[] = [];
  const ch = new RequestChannel({ postMessage: (m) => posted.push(m) }, (e) => events.push(e));
  return { ch, posted, events, answer: (r: Response) => ch.receive(r) };
}

const header = (id: string): RunHeader => ({
  id,
  name: id,
  createdAt: 0,
  updatedAt: 0,
  config: resolveConfig('grpo'),
  preset: 'grpo',
  backend: 'webgpu',
  status: 'imported',
  step: 0,
  savedStep: 0,
  elapsedMs: 0,
  adapter: '',
  lastMetrics: {},
});

describe('request ids', () => {
  it('give two requests of one type in flight their own replies, answered in either order', async () => {
    const { ch, posted, answer } = channel();
    const a = ch.request({ type: 'import', fileName: 'a.csv', text: 'a' });
    const b = ch.request({ type: 'import', fileName: 'b.csv', text: 'b' });
    expect(posted.map((p) => [p.type, p.id])).toEqual([
      ['import', 1],
      ['import', 2],
    ]);
    expect(posted[1]).toMatchObject({ fileName: 'b.csv', text: 'b' });
    answer({ type: 'imported', id: 2, header: header('from-b') });
    answer({ type: 'imported', id: 1, header: header('from-a') });
    expect((await a).header.id).toBe('from-a');
    expect((await b).header.id).toBe('from-b');
    expect(ch.inFlight).toBe(0);
  });

  it('deliver an error to its own caller only', async () => {
    const { ch, posted, answer, events } = channel();
    const first = ch.request({
      type: 'configure',
      config: resolveConfig('grpo'),
      preset: 'grpo',
      backend: 'webgpu',
      then: 'start',
    });
    const second = ch.request({
      type: 'configure',
      config: resolveConfig('dapo'),
      preset: 'dapo',
      backend: 'webgpu',
      then: 'start',
    });
    answer({ type: 'error', id: posted[0].id, message: 'checkpoint copy: not found', fatal: false });
    const err = await first.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RequestError);
    expect(err).toMatchObject({ request: 'configure', message: 'checkpoint copy: not found', fatal: false });
    expect(ch.inFlight).toBe(1);
    answer({ type: 'done', id: posted[1].id });
    await expect(second).resolves.toEqual({ type: 'done', id: posted[1].id });
    expect(events).toEqual([]);
  });

  it('hand events (no id) to the listener and ignore answers nobody waits for', async () => {
    const { ch, answer, events } = channel();
    const p = ch.request({ type: 'list-runs' });
    answer({ type: 'runs', runs: [], storage: null, persistent: false });
    answer({ type: 'error', message: 'GPU device lost', fatal: true });
    answer({ type: 'done', id: 99 });
    expect(events.map((e) => e.type)).toEqual(['runs', 'error']);
    expect(ch.inFlight).toBe(1);
    answer({ type: 'done', id: 1 });
    await expect(p).resolves.toMatchObject({ type: 'done' });
  });

  it('fail every request in flight when the worker dies, and settle nothing twice', async () => {
    const { ch, answer } = channel();
    const a = ch.request({ type: 'export', runId: 'r', kind: 'metrics-csv' });
    const b = ch.request({ type: 'load-run', runId: 'r' });
    ch.failAll('engine worker failed: out of memory');
    await expect(a).rejects.toMatchObject({
      request: 'export',
      fatal: true,
      message: 'engine worker failed: out of memory',
    });
    await expect(b).rejects.toMatchObject({ request: 'load-run', fatal: true });
    answer({ type: 'export-ready', id: 1, runId: 'r', kind: 'metrics-csv', files: [] });
    expect(ch.inFlight).toBe(0);
  });

  it('fail a request the port refuses to carry at once', async () => {
    const ch = new RequestChannel(
      {
        postMessage: () => {
          throw new Error('could not be cloned');
        },
      },
      () => undefined,
    );
    await expect(ch.request({ type: 'pause' })).rejects.toMatchObject({
      request: 'pause',
      message: 'could not be cloned',
    });
    expect(ch.inFlight).toBe(0);
  });
});
