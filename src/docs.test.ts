// Every document the code, the shaders, the scripts and the docs cite is in the repository, and every
// `docs/<page>.md#<anchor>` points at a heading of that page (GitHub's slugs), so a reader who follows a comment,
// a --help line or a config field's "math" link lands on the definition; every relative link of the README, the
// benchmark summary and docs/ resolves to a file (and its anchor to a heading); docs/algorithms.md names every knob;
// BENCHMARKS.md's summary is the one generated from docs/benchmarks/.

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FIELD_NAMES } from './schema/config';
import { headingSlug } from './schema/doc-links';
import { currentBenchmarksSummary } from './cli/benchmarks-doc';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? files(p, ext) : ext.test(e.name) ? [p] : [];
  });
}

function anchorsOf(page: string): Set<string> {
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => headingSlug(m[1])));
}

/** The documents people read: the root's pages and everything under docs/. */
const DOCUMENTS = ['README.md', 'BENCHMARKS.md', 'SECURITY.md', ...files('docs', /\.md$/)];

const CITING = [
  ...files('src', /\.(ts|tsx)$/),
  ...files('shaders', /\.wgsl$/),
  ...files('scripts', /\.(ts|sh|mjs|py)$/),
  ...DOCUMENTS,
];

/**
 * Where a cited page is: the path from the repository root, from docs/ (as docs/ and its generators write links),
 * from the citing file's own folder (a page of docs/benchmarks/ naming its neighbour), or a device's detail file of
 * docs/benchmarks/ by its file name (as the bench names them); undefined when none exists.
 */
function citedPath(citing: string, cited: string): string | undefined {
  return [cited, join('docs', cited), join(dirname(citing), cited), join('docs/benchmarks', cited)].find((p) =>
    existsSync(join(ROOT, p)),
  );
}

describe('documents the repository cites', () => {
  it('slugs follow GitHub', () => {
    expect(headingSlug('Importance ratio')).toBe('importance-ratio');
    expect(headingSlug('Loss `ppo_clip`: the clipped surrogate')).toBe('loss-ppo_clip-the-clipped-surrogate');
    expect(headingSlug('Value loss (PPO)')).toBe('value-loss-ppo');
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
        const path = citedPath(f, cited);
        if (!path) {
          problems.push(`${f}: cites ${cited}, which is not in the repository`);
          continue;
        }
        if (m[2] && !anchorsOf(path).has(m[2].slice(1)))
          problems.push(`${f}: ${cited}${m[2]} is not a heading of ${relative(ROOT, join(ROOT, path))}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every relative link of the README, BENCHMARKS.md, SECURITY.md and docs/ resolves, and its #anchor is a heading', () => {
    const problems: string[] = [];
    let links = 0;
    for (const f of DOCUMENTS) {
      // Links in code blocks and inline code are examples, not links.
      const text = readFileSync(join(ROOT, f), 'utf8')
        .replace(/```[\s\S]*?```/g, '')
        .replace(/`[^`\n]*`/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/i.test(target)) continue;
        links++;
        const [file, anchor] = target.split('#');
        const path = file ? join(dirname(f), file) : f;
        if (!existsSync(join(ROOT, path))) problems.push(`${f}: links ${target}, but ${path} is not in the repository`);
        else if (anchor && path.endsWith('.md') && !anchorsOf(path).has(anchor))
          problems.push(`${f}: links ${target}, but #${anchor} is not a heading of ${path}`);
      }
    }
    expect(problems).toEqual([]);
    expect(links).toBeGreaterThan(50);
  });

  it('BENCHMARKS.md holds the summary `npm run docs:benchmarks` generates from docs/benchmarks/', () => {
    const text = readFileSync(join(ROOT, 'BENCHMARKS.md'), 'utf8');
    expect(text, 'BENCHMARKS.md is stale: run npm run docs:benchmarks').toBe(currentBenchmarksSummary(ROOT));
    // Every device file the bench wrote shows up in the summary.
    for (const name of readdirSync(join(ROOT, 'docs/benchmarks')))
      if (readFileSync(join(ROOT, 'docs/benchmarks', name), 'utf8').includes('<!-- bench:'))
        expect(text).toContain(`(docs/benchmarks/${name})`);
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
