// The shared preamble of the GPU test files (Vitest in Node only: it imports vitest and Dawn): the device acquired
// before a file's tests and destroyed after them, and one test per GPU-vs-twin case. Not for the browser or CLI
// self-tests, which run the same cases through kernels/verify.ts's runKernelCases.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeAdapter, type GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import type { KernelCase } from '../kernels/verify';

/** The file's device; `ctx` may be read in tests and hooks, which run after the acquisition. */
export interface TestDevice {
  readonly ctx: GpuContext;
}

/**
 * Registers the file's device: acquired in beforeAll (its adapter logged), destroyed in afterAll. A missing
 * adapter fails the file's tests with the reason; nothing is skipped.
 */
export function useNodeDevice(): TestDevice {
  let ctx: GpuContext | undefined;
  beforeAll(async () => {
    ctx = await acquireNodeDevice();
    console.log(`adapter: ${describeAdapter(ctx.report)}`);
  });
  afterAll(() => ctx?.destroy());
  return {
    get ctx(): GpuContext {
      if (!ctx) throw new Error('the test device is acquired in beforeAll: read gpu.ctx inside a test or a hook');
      return ctx;
    },
  };
}

/**
 * One test per case, named after it: runs the case on the device and expects its outputs to match the CPU twin's,
 * with the case's summary as the failure message. `logResults` also prints every summary and its time.
 */
export function itEachCaseMatchesTwin(
  gpu: TestDevice,
  cases: readonly KernelCase[],
  opts: { logResults?: boolean } = {},
): void {
  for (const c of cases) {
    it(c.name, async () => {
      const r = await c.run(gpu.ctx);
      if (opts.logResults) console.log(`${r.name}: ${r.summary} (${r.ms.toFixed(1)} ms)`);
      expect(r.pass, `${c.name}: ${r.summary}`).toBe(true);
    });
  }
}
