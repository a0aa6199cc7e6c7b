// The Vite plugin that makes the built page work offline after its first visit: it writes sw.js, the service worker
// (scripts/service-worker.js) with the list of files to keep inlined, so every build changes sw.js and browsers
// update it. Kept: the page, its entry chunk, the app chunk the entry imports once it has started the engine worker
// (src/main.tsx), the chunks those import statically, their CSS, the engine worker, the
// shipped warm starts and tokenizers. Not kept: what loads only on demand (the benchmark panel and its worker,
// the peer backend, transformers.js and its WASM) and test fixtures, so the first visit does not fetch heavy
// libraries in the background. Build-time only.

import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Plugin } from 'vite';

/** public/ folders the service worker keeps (warm starts and tokenizers); fixtures are for tests. */
const KEPT_PUBLIC = ['checkpoints', 'tokenizers', 'favicon.svg'];

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

export function offlinePlugin(): Plugin {
  let publicDir = '';
  return {
    name: 'rl-lab-offline',
    apply: 'build',
    configResolved(config) {
      publicDir = config.publicDir;
    },
    generateBundle(_options, bundle) {
      const built = keptBuildFiles(bundle as unknown as Record<string, BundleItem>);
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
