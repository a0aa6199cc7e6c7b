// The CLIs' device: Dawn's adapter (src/gpu/node.ts) with the startup matmul autotune (src/kernels/matmul-tune.ts)
// applied, its choice cached per adapter in a JSON file under the user's cache directory, so only the first run on
// an adapter pays the few seconds of measurements. A cache that cannot be read or written only costs the re-tune.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { describeAdapter, type GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { autotuneMatmul, describeTuning, type TuneStore } from '../kernels/matmul-tune';
import type { FlagSpec } from './args';

/** The --autotune flag of the CLIs that train or generate. */
export const AUTOTUNE_FLAG: FlagSpec = {
  type: 'boolean',
  doc: 'run the startup matmul autotune, cached per adapter (--autotune=false: default variants)',
  default: true,
};

/** The cache file: $RL_LAB_CACHE_DIR, else $XDG_CACHE_HOME/rl-lab, else ~/.cache/rl-lab; matmul-tune.json. */
export function tuneCachePath(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.RL_LAB_CACHE_DIR || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'rl-lab');
  return join(dir, 'matmul-tune.json');
}

/** A TuneStore on one JSON file of key -> value; failures to read give an empty store, failures to write a warning. */
export function fileTuneStore(path: string, warn: (m: string) => void = () => {}): TuneStore {
  const load = (): Record<string, string> => {
    try {
      const o = JSON.parse(readFileSync(path, 'utf8')) as unknown;
      return o && typeof o === 'object' && !Array.isArray(o) ? (o as Record<string, string>) : {};
    } catch {
      return {};
    }
  };
  return {
    get: (key) => {
      const v = load()[key];
      return typeof v === 'string' ? v : null;
    },
    set: (key, value) => {
      try {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, `${JSON.stringify({ ...load(), [key]: value }, null, 2)}\n`);
      } catch (e) {
        warn(`could not cache the matmul autotune in ${path} (${(e as Error).message}); the next run measures again`);
      }
    },
  };
}

/**
 * Acquires the Node device and tunes its matmuls (unless tune is false), logging the adapter and the choice
 * through log (stderr by default).
 */
export async function acquireTunedDevice(
  options: { tune?: boolean; log?: (line: string) => void } = {},
): Promise<GpuContext> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const ctx = await acquireNodeDevice();
  log(`adapter: ${describeAdapter(ctx.report)}`);
  if (options.tune !== false)
    log(describeTuning(await autotuneMatmul(ctx, { store: fileTuneStore(tuneCachePath(), log) })));
  else log('matmul autotune: off (default variants)');
  return ctx;
}
