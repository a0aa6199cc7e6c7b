// `npm run selftest`: runs every kernel case on this machine's WebGPU adapter (Dawn) and prints a table; where
// the adapter has subgroups, then runs the row kernels' cases again on a device created without them, so both
// lane-merge variants (src/kernels/wgsl-blocks.ts) are checked. Exits non-zero when a case fails or no adapter
// is available. After each device's cases it prints the slowest pipeline compiles (src/gpu/kernel.ts: budget 2 s).
// VK_ICD_FILENAMES picks the Vulkan driver (e.g. /usr/share/vulkan/icd.d/lvp_icd.json for lavapipe).
// `--compiles` lists every pipeline instead of the slowest ten, each with its first dispatch timed alone (lavapipe
// compiles there: GpuContext.measureFirstDispatches). Mesa keeps compiled shaders in a disk cache
// (~/.cache/mesa_shader_cache_db): measure with MESA_SHADER_CACHE_DISABLE=true, or a second run reads the cache.

import { compileReport, describeAdapter, type GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { kernelCases, runKernelCases, type KernelCase } from '../kernels/cases';
import { ROW_REDUCTION_FAMILIES, rowReductionOf } from '../kernels/wgsl-blocks';
import { UsageError, runCli } from './args';

async function runOn(ctx: GpuContext, cases: readonly KernelCase[], everyCompile: boolean): Promise<number> {
  console.log(`adapter: ${describeAdapter(ctx.report)}; row reductions: ${rowReductionOf(ctx)}`);
  ctx.measureFirstDispatches = everyCompile;
  const results = await runKernelCases(ctx, cases, (r) => {
    console.log(`${r.pass ? 'PASS' : 'FAIL'}  ${r.name.padEnd(48)} ${r.ms.toFixed(1).padStart(7)} ms  ${r.summary}`);
  });
  await ctx.firstDispatchesTimed();
  console.log(compileReport(ctx.compileLog(), everyCompile ? Number.POSITIVE_INFINITY : 10).join('\n'));
  ctx.destroy();
  return results.filter((r) => !r.pass).length;
}

async function main(argv: string[]): Promise<number> {
  const everyCompile = argv.includes('--compiles');
  const rest = argv.filter((a) => a !== '--compiles');
  if (rest.length > 1 || rest.some((a) => a.startsWith('--')))
    throw new UsageError(`usage: selftest [--compiles] [filter], got ${argv.join(' ')}`);
  const filter = rest[0];
  const cases = kernelCases().filter((c) => !filter || c.name.includes(filter));
  if (cases.length === 0) throw new UsageError(`no kernel case matches "${filter}"`);
  const t0 = performance.now();
  const ctx = await acquireNodeDevice();
  const withSubgroups = rowReductionOf(ctx) === 'subgroups';
  let failed = await runOn(ctx, cases, everyCompile);
  let total = cases.length;
  const rowCases = cases.filter((c) => ROW_REDUCTION_FAMILIES.includes(c.family));
  if (withSubgroups && rowCases.length > 0) {
    console.log(
      `\nthe ${rowCases.length} row kernel cases again, on a device without subgroups (workgroup-memory merges):`,
    );
    failed += await runOn(await acquireNodeDevice({ withoutFeatures: ['subgroups'] }), rowCases, everyCompile);
    total += rowCases.length;
  }
  console.log(`${total - failed} passed, ${failed} failed (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  return failed ? 1 : 0;
}

runCli('selftest', main);
