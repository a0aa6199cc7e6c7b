// The Vite plugin that makes the built page work offline after its first visit: it writes sw.js, the service worker
// (scripts/service-worker.js) with the list of files to keep inlined, so every build changes sw.js and browsers
// update it. Kept: the page, its entry chunk, the app chunk the entry imports once it has started the engine worker
// (src/main.tsx), the chunks those import statically, their CSS, the engine worker and what it imports on demand
// for a run (the tokenizers and chat template libraries), the shipped warm starts, models and tokenizers. Not
// kept: what loads only on demand elsewhere (the benchmark panel and its worker, the peer backend, transformers.js
// and its WASM) and test fixtures, so the first visit does not fetch heavy
// libraries in the background. Build-time only.

import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Plugin } from 'vite';

/**
 * public/ folders the service worker keeps: warm starts, the shipped Hugging Face models (models/tiny-qwen2/ and
 * its kin, under a megabyte together) and tokenizers; fixtures are for tests.
 */
const KEPT_PUBLIC = ['checkpoints', 'models', 'tokenizers', 'favicon.svg'];

function filesUnder(root: string, path: string): string[] {
  const full = join(root, path);
  if (!statSync(full, { throwIfNoEntry: false })) return [];
  if (statSync(full).isFile()) return [path];
  return readdirSync(full).flatMap((f) => filesUnder(root, join(path, f)));
}

interface BundleItem {
  type: 'chunk' | 'asset';
  fileName: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  viteMetadata?: { importedCss?: Set<string> };
}

/**
 * The built files a first visit needs to run a lab offline: the entry chunk and the app chunk it imports (its dynamic
 * imports; not those of the chunks below it, which load on demand), their static imports and CSS, the engine worker.
 */
export function keptBuildFiles(bundle: Readonly<Record<string, BundleItem>>): string[] {
  const kept = new Set<string>();
  const visit = (name: string) => {
    const item = bundle[name];
    if (!item || kept.has(name)) return;
    kept.add(name);
    for (const css of item.viteMetadata?.importedCss ?? []) kept.add(css);
    for (const i of item.imports ?? []) visit(i);
  };
  for (const item of Object.values(bundle))
    if (item.type === 'chunk' && item.isEntry)
      for (const name of [item.fileName, ...(item.dynamicImports ?? [])]) visit(name);
  for (const item of Object.values(bundle)) {
    if (/(^|\/)engine\.worker-[^/]*\.js$/.test(item.fileName) || item.fileName.endsWith('.css'))
      kept.add(item.fileName);
  }
  return [...kept].sort();
}

/** What the engine worker loads on demand that a run does not need: transformers.js (its tokenizer fallback) and WASM. */
const HEAVY_ON_DEMAND = /(^|\/)(transformers\.web-[^/]*\.js|[^/]*\.wasm)$/;

/**
 * The files the engine worker imports on demand that a run of a shipped model needs offline (the tokenizers and
 * chat template libraries; a separate build, so the main bundle holds them as plain assets without their import
 * lists): the `import("./x.js")` its source names, then what those import statically, less HEAVY_ON_DEMAND.
 */
export function keptWorkerImports(bundle: Readonly<Record<string, { fileName: string; source?: unknown }>>): string[] {
  const byName = new Map(Object.values(bundle).map((b) => [b.fileName, b]));
  const textOf = (name: string) => {
    const source = byName.get(name)?.source;
    return typeof source === 'string' ? source : source instanceof Uint8Array ? new TextDecoder().decode(source) : '';
  };
  const sibling = (from: string, rel: string) => `${from.slice(0, from.lastIndexOf('/') + 1)}${rel.slice(2)}`;
  const kept = new Set<string>();
  const visit = (name: string, text: string, pattern: RegExp) => {
    for (const m of text.matchAll(pattern)) {
      const file = sibling(name, m[1]);
      if (kept.has(file) || HEAVY_ON_DEMAND.test(file) || !byName.has(file)) continue;
      kept.add(file);
      visit(file, textOf(file), /(?:from|import)\s*["'`](\.\/[^"'`]+\.js)["'`]/g);
    }
  };
  for (const name of byName.keys())
    if (/(^|\/)engine\.worker-[^/]*\.js$/.test(name))
      visit(name, textOf(name), /import\(\s*["'`](\.\/[^"'`]+\.js)["'`]\s*\)/g);
  return [...kept].sort();
}

export function offlinePlugin(): Plugin {
  let publicDir = '';
  return {
    name: 'rl-lab-offline',
    apply: 'build',
    configResolved(config) {
      publicDir = config.publicDir;
    },
    generateBundle(_options, bundle) {
      const built = [
        ...new Set([
          ...keptBuildFiles(bundle as unknown as Record<string, BundleItem>),
          ...keptWorkerImports(bundle as unknown as Record<string, { fileName: string; source?: unknown }>),
        ]),
      ].sort();
      const shipped = KEPT_PUBLIC.flatMap((p) => filesUnder(publicDir, p)).map((f) =>
        relative(publicDir, join(publicDir, f)).split('\\').join('/'),
      );
      const files = ['', ...built, ...shipped.sort()];
      const hash = createHash('sha256');
      for (const f of built) hash.update(f);
      for (const f of shipped) hash.update(f).update(readFileSync(join(publicDir, f)));
      const precache = { version: hash.digest('hex').slice(0, 16), files };
      const source = readFileSync(new URL('./service-worker.js', import.meta.url), 'utf8');
      this.emitFile({
        type: 'asset',
        fileName: 'sw.js',
        source: `const PRECACHE = ${JSON.stringify(precache)};\n${source}`,
      });
    },
  };
}
