// `npm run train` (RL, or with --sft the supervised warm start) in the test's own process: its stderr captured
// (progress, warnings, alerts as "warning: ..." lines), and the error it stopped with, if any. Faster than a child
// process, for tests that compare drivers.

import { vi } from 'vitest';
import { trainRl } from '../cli/train-rl';
import { isSftCommand, trainSftCommand } from '../cli/train-sft';

/** The CLI in process: its stderr, its exit code (null when it threw) or the error it stopped with. */
export async function trainInProcess(
  argv: string[],
): Promise<{ stderr: string; code: number | null; error: Error | null }> {
  let stderr = '';
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  const err = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => {
    stderr += `${a.join(' ')}\n`;
  });
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const code = await (isSftCommand(argv) ? trainSftCommand(argv) : trainRl(argv));
    return { stderr, code, error: null };
  } catch (e) {
    return { stderr, code: null, error: e as Error };
  } finally {
    write.mockRestore();
    err.mockRestore();
    log.mockRestore();
  }
}
