// Every document the code, the shaders, the scripts and the docs cite is in the repository, and every
// `docs/<page>.md#<anchor>` points at a heading of that page (GitHub's slugs), so a reader who follows a comment,
// a --help line or a config field's "math" link lands on the definition; docs/algorithms.md names every knob.

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FIELD_NAMES } from './rl/config';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? files(p, ext) : ext.test(e.name) ? [p] : [];
  });
}

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped except - and _, spaces to -. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(page: string): Set<string> {
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1])));
}

const CITING = [
  ...files('src', /\.(ts|tsx)$/),
  ...files('shaders', /\.wgsl$/),
  ...files('scripts', /\.(ts|sh|mjs|py)$/),
  ...files('docs', /\.md$/),
  'README.md',
  'SECURITY.md',
];

describe('documents the repository cites', () => {
  it('slugs follow GitHub', () => {
    expect(slug('Importance ratio')).toBe('importance-ratio');
    expect(slug('Loss `ppo_clip`: the clipped surrogate')).toBe('loss-ppo_clip-the-clipped-surrogate');
    expect(slug('Value loss (PPO)')).toBe('value-loss-ppo');
  });

  it('every cited .md file exists, and every docs/<page>.md#anchor is a heading of that page', () => {
    const problems: string[] = [];
    for (const f of CITING) {
      if (f.endsWith('docs.test.ts')) continue;
      // A line that saves a file names that file, not a document (the bench page's report).
      const text = readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        .filter((line) => !line.includes('download('))
        .join('\n');
      for (const m of text.matchAll(/(?:\.\.\/|\.\/)?\b((?:docs\/)?[A-Za-z][\w./-]*\.md)(#[\w-]+)?/g)) {
        const cited = m[1];
        // A bare page name is the repository root's, or a page of docs/ (as docs/ and its generators write links).
        const path = !cited.includes('/') && !existsSync(join(ROOT, cited)) ? join('docs', cited) : cited;
        if (!existsSync(join(ROOT, path))) {
          problems.push(`${f}: cites ${cited}, which is not in the repository`);
          continue;
        }
        if (m[2] && !anchorsOf(path).has(m[2].slice(1)))
          problems.push(`${f}: ${cited}${m[2]} is not a heading of ${relative(ROOT, join(ROOT, path))}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every source and test file SECURITY.md names exists, so each promise points at the code and test that keep it', () => {
    const text = readFileSync(join(ROOT, 'SECURITY.md'), 'utf8');
    const named = [...text.matchAll(/`((?:src|e2e)\/[\w./-]+\.(?:ts|tsx))`/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  });

  it('docs/algorithms.md names every config field, so a knob is found by its name', () => {
    const text = readFileSync(join(ROOT, 'docs/algorithms.md'), 'utf8');
    expect(FIELD_NAMES.filter((f) => !text.includes(`\`${f}\``))).toEqual([]);
  });
});
