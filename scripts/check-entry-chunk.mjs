#!/usr/bin/env node
// After `vite build`: the page's bundle (the entry chunk index.html loads, the chunks it preloads, the app chunk the
// entry imports once the engine worker is started (src/main.tsx), and every chunk those import statically) holds no
// WGSL and no trainer code; those belong in the engine worker's chunk. src/layers.test.ts checks the imports; this
// checks what the bundler made of them. WGSL is told by its markers, the trainer by the long string literals of
// src/rl/algorithm/trainer.ts and src/rl/learners/learner.ts (read from the sources, so the check follows them as they change), each
// of which must turn up in some other chunk, so a marker that matches nothing cannot pass unnoticed (metric names,
// which the page shows, are not markers).
// Usage: node scripts/check-entry-chunk.mjs [dist]   (exit 1 on a finding)

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = process.argv[2] ?? join(ROOT, 'dist');
const WGSL_MARKERS = ['@compute', '@workgroup_size', 'var<storage'];
const TRAINER_SOURCES = ['src/rl/algorithm/trainer.ts', 'src/rl/learners/learner.ts'];
const CATALOG = 'src/schema/metrics.ts';

/** The single-quoted string literals of a TypeScript text (comments and templates skipped), at least `min` long. */
export function longStrings(text, min = 30) {
  const out = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') i = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i);
    else if (c === '/' && text[i + 1] === '*') i = text.indexOf('*/', i + 2) + 1 || text.length;
    else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      const s = text.slice(i + 1, j);
      if (c !== '`' && s.length >= min && !s.includes('\\')) out.push(s);
      i = j;
    }
  }
  return out;
}

function fail(message) {
  console.error(`check-entry-chunk: ${message}`);
  process.exit(1);
}

const html = join(DIST, 'index.html');
if (!existsSync(html)) fail(`${html} is not there: run \`npx vite build\` first`);
const entries = [
  ...readFileSync(html, 'utf8').matchAll(
    /<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\/?([^"]+\.js)"/g,
  ),
].map((m) => m[1]);
if (!entries.length) fail('index.html loads no script');
const assets = readdirSync(join(DIST, 'assets'))
  .filter((f) => f.endsWith('.js'))
  .map((f) => `assets/${f}`);
const text = (f) => readFileSync(join(DIST, f), 'utf8');
const matches = (t, re) => [...t.matchAll(re)].map((m) => `assets/${m[1]}`);
/**
 * The chunks a chunk loads with it: its static imports; for an entry, also the chunks it imports dynamically and
 * the ones their import preloads (Vite's list of "assets/..." names). Worker scripts are URLs ("/assets/..."), not
 * imports, so they are not followed.
 */
const loads = (f, entry) => {
  const t = text(f);
  const out = matches(t, /(?:\bfrom|\bimport)\s*["'`]\.\/([^"'`]+\.js)["'`]/g);
  if (entry)
    out.push(
      ...matches(t, /\bimport\(\s*["'`]\.\/([^"'`]+\.js)["'`]\s*\)/g),
      ...matches(t, /["'`]assets\/([^"'`]+\.js)["'`]/g),
    );
  return out;
};
const page = [...entries];
for (let i = 0; i < page.length; i++)
  for (const g of loads(page[i], entries.includes(page[i]))) if (!page.includes(g) && assets.includes(g)) page.push(g);
const others = assets.filter((f) => !page.includes(f));
const othersText = others.map(text).join('\n');

// Metric names are the page's vocabulary too (the catalog, src/schema/metrics.ts): the trainer's own strings only.
const catalog = readFileSync(join(ROOT, CATALOG), 'utf8');
const trainer = TRAINER_SOURCES.flatMap((src) =>
  longStrings(readFileSync(join(ROOT, src), 'utf8'))
    .filter((s) => !catalog.includes(`'${s}'`))
    .map((s) => ({ src, s })),
);
const found = trainer.filter(({ s }) => othersText.includes(s));
for (const src of TRAINER_SOURCES)
  if (!found.some((m) => m.src === src))
    fail(`no string of ${src} is in any chunk: the markers no longer find the trainer`);
for (const m of WGSL_MARKERS)
  if (!othersText.includes(m)) fail(`no chunk holds "${m}": the WGSL markers no longer find the shaders`);

const problems = [];
for (const f of page) {
  const t = text(f);
  for (const m of WGSL_MARKERS) if (t.includes(m)) problems.push(`${f} holds WGSL ("${m}")`);
  for (const { src, s } of found)
    if (t.includes(s)) problems.push(`${f} holds a string of ${src}: "${s.slice(0, 60)}"`);
}
const kb = (f) => (readFileSync(join(DIST, f)).length / 1000).toFixed(2);
if (problems.length) fail(`the page's bundle holds worker code:\n  ${problems.join('\n  ')}`);
console.log(
  `check-entry-chunk: the page's bundle (${page.map((f) => `${f} ${kb(f)} kB`).join(', ')}) holds no WGSL and none of ${found.length} trainer strings`,
);
