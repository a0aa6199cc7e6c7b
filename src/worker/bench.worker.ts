// The benchmark worker: acquires its own GPUDevice and runs the benchmark suite (src/bench/suite.ts, the same code
// `npm run bench` runs in Node), streaming each measured row to the page. Not the lab's engine worker.

import { acquireDevice, describeAdapter, WebGpuUnavailableError, type GpuContext } from '../gpu';
import { reportMarkdown } from '../schema/bench-report';
import { runBench } from '../bench/suite';
import type { BenchRequest, BenchResponse, BenchRunOptions } from './bench-client';

let ctx: GpuContext | null = null;
let running = false;
let cancelled = false;

function post(message: BenchResponse): void {
  (self as unknown as { postMessage(m: BenchResponse): void }).postMessage(message);
}

async function init(): Promise<void> {
  try {
    ctx = await acquireDevice({ runtime: 'browser' });
    ctx.onError((e) => post({ type: 'error', message: e.message }));
    post({ type: 'ready', device: describeAdapter(ctx.report), adapter: ctx.report });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    post(e instanceof WebGpuUnavailableError ? { type: 'unavailable', message } : { type: 'error', message });
  }
}

async function run(options: BenchRunOptions): Promise<void> {
  if (!ctx) throw new Error('the GPU is not initialized');
  if (running) throw new Error('a benchmark is already running');
  running = true;
  cancelled = false;
  try {
    const report = await runBench(ctx, {
      ...options,
      command: `page ?bench (${navigator.userAgent})`,
      onRow: (row) => post({ type: 'row', row }),
      onProgress: (message) => post({ type: 'progress', message }),
      cancelled: () => cancelled,
    });
    post({ type: 'done', report, markdown: reportMarkdown(report), cancelled });
  } finally {
    running = false;
  }
}

const ready = init();

self.onmessage = (ev: MessageEvent<BenchRequest>) => {
  const req = ev.data;
  if (req.type === 'cancel') {
    cancelled = true;
    return;
  }
  ready
    .then(() => run(req.options))
    .catch((e: unknown) => post({ type: 'error', message: e instanceof Error ? e.message : String(e) }));
};
