// `npm run selftest`: runs every kernel case on this machine's WebGPU adapter (Dawn) and prints a table.
// Exits non-zero when a case fails or no adapter is available.

import { describeAdapter } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { kernelCases, runKernelCases } from '../kernels/cases';
import { UsageError, runCli } from './args';

async function main(argv: string[]): Promise<number> {
  const ctx = await acquireNodeDevice();
  console.log(`adapter: ${describeAdapter(ctx.report)}`);
  const filter = argv[0];
  const cases = kernelCases().filter((c) => !filter || c.name.includes(filter));
  if (cases.length === 0) throw new UsageError(`no kernel case matches "${filter}"`);
  const t0 = performance.now();
  const results = await runKernelCases(ctx, cases, (r) => {
    console.log(`${r.pass ? 'PASS' : 'FAIL'}  ${r.name.padEnd(48)} ${r.ms.toFixed(1).padStart(7)} ms  ${r.summary}`);
  });
  ctx.destroy();
  const failed = results.filter((r) => !r.pass).length;
  console.log(`${results.length - failed} passed, ${failed} failed (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  return failed ? 1 : 0;
}

runCli('selftest', main);
