// A prompt list of 200,000 rows reads in Node's main thread, as `npm run train` reads one: a spread of the whole
// list into one call (Math.max(...list)) overflowed its call stack from about 110,000 rows. A child process, since a
// test worker's stack is larger than the main thread's.

import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const SCRIPT = `
const { promptListTask } = await import('./src/tasks/prompt-list.ts');
const rows = Array.from({ length: 200000 }, (_, i) => 'p' + i + ',' + (i % 7));
rows[123456] = 'x'.repeat(40) + ',12345';
const t = promptListTask('prompt,answer\\n' + rows.join('\\n')).create();
process.stdout.write(JSON.stringify({ longest: t.maxPromptLength, description: t.description.slice(0, 30) }));
`;

describe('a long prompt list', () => {
  it('of 200,000 rows is read in the main thread without overflowing its stack', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ longest: 40, description: 'Your own 200000 prompts (line ' });
  }, 120_000);
});
