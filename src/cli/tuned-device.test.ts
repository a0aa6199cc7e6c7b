// The CLIs' autotune cache file: a round trip, a corrupt file read as empty, an unwritable path only warned about.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileTuneStore, tuneCachePath } from './tuned-device';

describe('fileTuneStore', () => {
  it('keeps values per key across stores on the same file', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tune-')), 'sub', 'matmul-tune.json');
    const a = fileTuneStore(path);
    expect(a.get('x')).toBeNull();
    a.set('x', '{"NT":"vec4"}');
    a.set('y', '{"NT":"blocked"}');
    const b = fileTuneStore(path);
    expect(b.get('x')).toBe('{"NT":"vec4"}');
    expect(b.get('y')).toBe('{"NT":"blocked"}');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ x: '{"NT":"vec4"}', y: '{"NT":"blocked"}' });
  });

  it('reads a corrupt file as empty and replaces it on the next write', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tune-')), 'matmul-tune.json');
    writeFileSync(path, '{not json');
    const s = fileTuneStore(path);
    expect(s.get('x')).toBeNull();
    s.set('x', 'v');
    expect(s.get('x')).toBe('v');
  });

  it('warns, and does not throw, when the file cannot be written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tune-'));
    writeFileSync(join(dir, 'file'), '');
    const warnings: string[] = [];
    const s = fileTuneStore(join(dir, 'file', 'matmul-tune.json'), (m) => warnings.push(m));
    expect(() => s.set('x', 'v')).not.toThrow();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/could not cache the matmul autotune/);
  });

  it('puts the cache under RL_LAB_CACHE_DIR, else XDG_CACHE_HOME/rl-lab', () => {
    expect(tuneCachePath({ RL_LAB_CACHE_DIR: '/c' })).toBe('/c/matmul-tune.json');
    expect(tuneCachePath({ XDG_CACHE_HOME: '/x' })).toBe('/x/rl-lab/matmul-tune.json');
  });
});
