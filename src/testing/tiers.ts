// The two tiers of the Vitest suite (vite.config.ts's projects), read from each test file's text:
//   slow  files that acquire a WebGPU device through Dawn (the shared test device, acquireNodeDevice, the webgpu
//         package, the CLI's tuned device), start the CLI in a child process (which may open one), or train the real
//         model through a LabEngine or the train CLI in process (src/testing/train-in-process.ts); 120 s per test
//   fast  everything else: pure logic on the CPU, no Dawn; 10 s per test (`npm run test:fast`)
// Each tier's files share their worker (Vitest's isolate off, the `fast` and `slow` projects: a file does not pay for
// a fresh module graph, nor in the slow tier for a fresh process and Dawn instance: 12 slow files took 57.5 s against
// 83.5 s, the fast tier 51 s against 75 s); the few that bind a process-wide backend or mock a module run each in a
// worker of their own (`fast-alone`, `slow-alone`: ALONE_SIGNS).
// `npm test` (scripts/test.sh) runs the fast tier first and stops there on a failure, then the slow tier, each file
// once; `npm run test:lavapipe` runs the kernel and GPU-model files of the slow tier a second time on lavapipe
// (secondDriverFiles).

import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

export type Tier = 'fast' | 'slow';

/**
 * What puts a test file in the slow tier: an import statement or a call at the start of a line (so a quoted example
 * in a test, like tiers.test.ts's, does not count).
 */
const SLOW_SIGNS: readonly RegExp[] = [
  /^import\s[^;]*?from\s+['"](?:[^'"]*\/testing\/(?:test-device|train-in-process)|[^'"]*\/gpu\/node|webgpu|(?:node:)?child_process|[^'"]*\/cli\/tuned-device)['"]/m,
  /^[^'"`\n]*\bimport\(\s*['"]webgpu['"]\s*\)/m,
  /^[^'"`\n]*\b(?:acquireNodeDevice|useNodeDevice)\(/m,
  /^[^'"`\n]*\bnew LabEngine\b/m,
];

/** The tier of one test file, from its source text. */
export function tierOf(text: string): Tier {
  return SLOW_SIGNS.some((re) => re.test(text)) ? 'slow' : 'fast';
}

/** Every *.test.ts under `dir`, relative to `root` with forward slashes, sorted. */
function testFiles(root: string, dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return testFiles(root, p);
    return e.name.endsWith('.test.ts') ? [relative(root, p).split('\\').join('/')] : [];
  });
}

/** The test files under `root`/src, split by tier. */
export function testTiers(root: string): Record<Tier, string[]> {
  const out: Record<Tier, string[]> = { fast: [], slow: [] };
  for (const f of testFiles(root, join(root, 'src')).sort()) out[tierOf(readFileSync(join(root, f), 'utf8'))].push(f);
  return out;
}

/**
 * What keeps a file out of its tier's shared worker: jax-js starts its WebGPU backend once per process, bound to one
 * GPUDevice (the bench's peer and its test each bind their own device), and vi.mock replaces a module for the files
 * after it too when the module graph is shared.
 */
const ALONE_SIGNS: readonly RegExp[] = [/^[^'"`\n]*\b(?:useJaxOnDevice|runBench)\(/m, /^[^'"`\n]*\bvi\.mock\(/m];

/** Whether a test file must run in a worker of its own, from its source text. */
export function needsOwnWorker(text: string): boolean {
  return ALONE_SIGNS.some((re) => re.test(text));
}

/** One tier's files split into those that share a worker and those that each run alone. */
export function sharedAndAlone(root: string, files: readonly string[]): { shared: string[]; alone: string[] } {
  const out = { shared: [] as string[], alone: [] as string[] };
  for (const f of files) (needsOwnWorker(readFileSync(join(root, f), 'utf8')) ? out.alone : out.shared).push(f);
  return out;
}

/**
 * The slow-tier files that run a second time on lavapipe (vite.config.ts's `lavapipe` project): every kernel case,
 * the GPU layer, the GPU model and the parity fixture, so each WGSL kernel is checked on two drivers' compilers.
 */
export const SECOND_DRIVER_FILES: readonly RegExp[] = [
  /^src\/kernels\/[^/]+\.test\.ts$/,
  /^src\/gpu\/[^/]+\.test\.ts$/,
  /^src\/model\/gpu-[^/]+\.test\.ts$/,
  /^src\/reference\/parity\.test\.ts$/,
];

/** The slow files of `tiers` that SECOND_DRIVER_FILES names. */
export function secondDriverFiles(tiers: Record<Tier, string[]>): string[] {
  return tiers.slow.filter((f) => SECOND_DRIVER_FILES.some((re) => re.test(f)));
}
