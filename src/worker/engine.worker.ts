// The engine worker: owns the GPUDevice and everything that runs on it, so the page's main thread only draws.
// Answers the requests of protocol.ts; turns device loss and uncaptured GPU errors into 'error' messages.

import { acquireDevice, GpuDeviceLostError, WebGpuUnavailableError, type GpuContext } from '../gpu';
import { kernelCases } from '../kernels/cases';
import { runKernelCases } from '../kernels/verify';
import { assertNever, type Request, type Response } from './protocol';

let ctx: GpuContext | null = null;

function post(message: Response): void {
  (self as unknown as { postMessage(m: Response): void }).postMessage(message);
}

async function init(): Promise<void> {
  try {
    ctx ??= await acquireDevice({ runtime: 'browser' });
    ctx.onError((e) => post({ type: 'error', message: e.message, fatal: e instanceof GpuDeviceLostError }));
    post({ type: 'ready', report: ctx.report });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    post(e instanceof WebGpuUnavailableError ? { type: 'unavailable', message } : { type: 'error', message, fatal: true });
  }
}

async function selftest(filter: string | undefined): Promise<void> {
  if (!ctx) throw new Error('the GPU is not initialized');
  const cases = kernelCases().filter((c) => !filter || c.name.includes(filter));
  const t0 = performance.now();
  let index = 0;
  const results = await runKernelCases(ctx, cases, (result) => post({ type: 'selftest-case', result, index: index++, total: cases.length }));
  const failed = results.filter((r) => !r.pass).length;
  post({ type: 'selftest-done', passed: results.length - failed, failed, ms: performance.now() - t0 });
}

self.onmessage = (ev: MessageEvent<Request>) => {
  const req = ev.data;
  const run = async () => {
    switch (req.type) {
      case 'init':
        return init();
      case 'selftest':
        return selftest(req.filter);
      default:
        return assertNever(req);
    }
  };
  run().catch((e: unknown) => post({ type: 'error', message: e instanceof Error ? e.message : String(e), fatal: false }));
};
