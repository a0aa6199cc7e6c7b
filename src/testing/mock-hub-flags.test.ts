// The mock hub's command line (scripts/mock-hub.ts): each fault flag sets the fault the hub tests inject, a bad
// argument is named with the usage, and faults given as flags do to the CLI's download what they do in the tests:
// a 0-byte announcement named, a stall cut, an endless body and a gzip bomb stopped. The script itself is started
// once, with a fault flag, and answers as the flag says.

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchHubModel } from '../cli/hub-cache';
import { parseHubId } from '../schema/hub-id';
import { startMockHub, type MockHub } from './mock-hub';
import { mockHubUsage, parseMockHubArgs } from './mock-hub-flags';

const TINY_DIR = fileURLToPath(new URL('../../public/models/tiny-qwen2/', import.meta.url));
const tinyFiles = () =>
  Object.fromEntries(readdirSync(TINY_DIR).map((f) => [f, new Uint8Array(readFileSync(join(TINY_DIR, f)))]));
const W = 'model.safetensors';

describe('the mock hub command line', () => {
  it('turns each fault flag into the fault the hub tests inject', () => {
    const args = parseMockHubArgs([
      'org/tiny=public/models/tiny-qwen2',
      '--port',
      '4311:4312',
      `--stall=${W}:100000`,
      '--silent-head',
      'config.json',
      `--endless=${W}`,
      `--gzip=${W}:1048576`,
      `--wrong-size=${W}:0`,
      `--wrong-sha256=${W}:${'ab'.repeat(32)}`,
      `--drop=${W}:5000:2`,
      '--slow=65536:60',
      '--ignore-range',
    ]);
    expect(args.repos).toEqual([{ id: 'org/tiny', dir: 'public/models/tiny-qwen2' }]);
    expect(args.ports).toEqual({ hub: 4311, cdn: 4312 });
    expect(args.faults).toEqual({
      stall: { file: W, afterBytes: 100000 },
      silentHead: { file: 'config.json' },
      endless: { file: W },
      gzip: { file: W, inflatedBytes: 1048576 },
      wrongSize: { file: W, size: 0 },
      wrongSha256: { file: W, sha256: 'ab'.repeat(32) },
      drop: { file: W, afterBytes: 5000, count: 2 },
      slow: { chunkBytes: 65536, pauseMs: 60 },
      ignoreRange: true,
    });
    // Defaults: a stall after 1000 bytes, a 1 GiB bomb, one dropped GET.
    expect(parseMockHubArgs(['a/b=d', `--stall=${W}`, `--gzip=${W}`, `--drop=${W}:10`]).faults).toEqual({
      stall: { file: W, afterBytes: 1000 },
      gzip: { file: W, inflatedBytes: 2 ** 30 },
      drop: { file: W, afterBytes: 10, count: 1 },
    });
  });

  it('names a bad argument and shows the usage', () => {
    const bad =
      (...argv: string[]) =>
      () =>
        parseMockHubArgs(['a/b=d', ...argv]);
    expect(bad('--stall')).toThrow(/^--stall needs FILE\[:BYTES\]\nusage: /);
    expect(bad(`--wrong-size=${W}`)).toThrow(/^--wrong-size: SIZE must be a whole number >= 0, got ""/);
    expect(bad(`--wrong-size=${W}:-1`)).toThrow(/^--wrong-size: SIZE must be a whole number >= 0, got "-1"/);
    expect(bad('--wrong-sha256=x:12')).toThrow(/^--wrong-sha256: HEX must be 64 lowercase hex digits/);
    expect(bad('--endless=')).toThrow(/^--endless needs FILE/);
    expect(bad('--stall=:10')).toThrow(/^--stall: FILE is empty/);
    expect(bad('--bomb')).toThrow(/^unknown flag --bomb/);
    expect(() => parseMockHubArgs(['--ignore-range'])).toThrow(/^no model to serve/);
    expect(() => parseMockHubArgs(['org-tiny'])).toThrow(/^give org\/name=DIR, got "org-tiny"/);
    for (const flag of ['--stall', '--silent-head', '--endless', '--gzip', '--wrong-size', '--drop', '--port'])
      expect(mockHubUsage()).toContain(flag);
  });

  describe('faults given as flags, against the CLI download', () => {
    let hub: MockHub;
    let cache: string;
    afterEach(async () => {
      await hub.close();
      rmSync(cache, { recursive: true, force: true });
    });
    const download = async (...flags: string[]) => {
      hub = await startMockHub({ 'org/tiny': { files: tinyFiles() } });
      Object.assign(hub.faults, parseMockHubArgs(['org/tiny=x', ...flags]).faults);
      cache = mkdtempSync(join(tmpdir(), 'rl-lab-hub-flags-'));
      const transfer = { headersTimeoutMs: 500, idleTimeoutMs: 500, resumes: 1, backoffMs: 10, maxBackoffMs: 20 };
      const options = { endpoint: hub.endpoint, token: null, cacheDir: cache, log: () => {}, transfer };
      return fetchHubModel(parseHubId('org/tiny'), 'checkpoint', options).then(
        () => 'downloaded',
        (e: Error) => e.message,
      );
    };

    it('a 0-byte announcement, a stall, an endless body and a gzip bomb are refused as in the tests', async () => {
      expect(await download(`--wrong-size=${W}:0`)).toMatch(/the hub announced it as 0 bytes with SHA-256/);
      expect(await download(`--stall=${W}:1000`)).toMatch(
        /no data from 127\.0\.0\.1:\d+ for 0\.5 s while downloading model\.safetensors/,
      );
      expect(await download(`--endless=${W}`)).toMatch(
        /sent more than the \d+ bytes the hub announced \(the transfer was stopped at the first byte past them\)/,
      );
      expect(await download(`--gzip=${W}:1048576`)).toMatch(/sent it with Content-Encoding gzip/);
      expect(await download('--slow=65536:1')).toBe('downloaded');
    });
  });

  it('scripts/mock-hub.ts serves a folder with the faults its flags name', async () => {
    const child = spawn('npx', ['tsx', 'scripts/mock-hub.ts', `org/tiny=${TINY_DIR}`, `--wrong-size=${W}:0`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const endpoint = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.trim());
        });
        child.on('exit', (code) => reject(new Error(`mock-hub.ts exited with ${code}`)));
      });
      const head = await fetch(`${endpoint}/org/tiny/resolve/main/${W}`, { method: 'HEAD', redirect: 'manual' });
      expect(head.headers.get('x-linked-size')).toBe('0');
    } finally {
      child.kill('SIGINT');
    }
  }, 60_000);
});
