// The layer rule of docs/architecture.md (src/layers.ts holds it), read from the imports of every file
// under src/: a module imports only from its own layer or lower ones; the UI imports values only from the store (types
// from anywhere); the page (main.tsx, ui, store) imports values from below only from the page-safe layers of
// PAGE_SAFE, and nothing it reaches, however far down, is GPU, kernel, WGSL or trainer code; React, zustand and
// recharts stay above the worker; the `webgpu` package stays in src/gpu. Tests (*.test.ts) may reach anywhere.
// The test support under src/testing/ (Vitest preambles such as the GPU test device) may reach anywhere; product code
// imports neither src/testing/ nor vitest.

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LAYER_LINE, ORDER, PAGE_LAYERS, PAGE_NEVER, PAGE_SAFE, type Layer } from './layers';

const SRC = dirname(fileURLToPath(import.meta.url));

/** The folder of test-only helpers: outside the layers, importable from tests only. */
const TEST_SUPPORT = 'testing';

/** Packages only some layers may import. */
const PACKAGES: Record<string, readonly Layer[]> = {
  react: ['main', 'ui'],
  'react-dom': ['main', 'ui'],
  'react-dom/client': ['main', 'ui'],
  recharts: ['ui'],
  zustand: ['store', 'ui'],
  webgpu: ['gpu'],
};

export interface Import {
  from: string;
  specifier: string;
  typeOnly: boolean;
}

/** Every import and re-export of a TypeScript source text (static, side-effect and dynamic). */
export function importsOf(file: string, text: string): Import[] {
  const out: Import[] = [];
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  for (const m of code.matchAll(/(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/g)) {
    out.push({ from: file, specifier: m[3], typeOnly: !!m[2] });
  }
  for (const m of code.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g))
    out.push({ from: file, specifier: m[1], typeOnly: false });
  return out;
}

/** The layer of a path under src/ (relative), or null for paths outside src/ (shaders, public). */
export function layerOf(rel: string): Layer | null {
  if (rel.startsWith('..')) return null;
  const top = rel.split('/')[0];
  if (top !== 'main' && (ORDER as readonly string[]).includes(top)) return top as Layer; // a file, or a folder's index
  return rel.includes('/') ? null : 'main';
}

/** Whether a path under src/ (relative) is test support. */
export function isTestSupport(rel: string): boolean {
  return rel.split('/')[0] === TEST_SUPPORT;
}

/** What is wrong with one import, or null. `rel` is the importing file's path relative to src/. */
export function violation(rel: string, imp: Import): string | null {
  if (isTestSupport(rel)) return null;
  const from = layerOf(rel);
  if (!from) return `${rel}: a file outside the known layers (${ORDER.join(', ')}) and ${TEST_SUPPORT}/`;
  const s = imp.specifier.replace(/\?raw$/, '');
  if (!s.startsWith('.')) {
    if (s === 'vitest' || s.startsWith('vitest/'))
      return `${rel} imports ${s}: only tests and ${TEST_SUPPORT}/ may use vitest`;
    const allowed = PACKAGES[s];
    return allowed && !allowed.includes(from)
      ? `${rel} imports the package ${s}, which only ${allowed.join(', ')} may use`
      : null;
  }
  const targetRel = relative(SRC, resolve(SRC, dirname(rel), s))
    .split('\\')
    .join('/');
  if (isTestSupport(targetRel)) return `${rel} imports ${s}: ${TEST_SUPPORT}/ is test support, for tests only`;
  const target = layerOf(targetRel);
  if (target === null || target === from) return null;
  if (ORDER.indexOf(target) < ORDER.indexOf(from) && !imp.typeOnly)
    return `${rel} imports ${s}: ${from} may not import from ${target}, a layer above it`;
  if (from === 'ui' && target !== 'store' && !imp.typeOnly)
    return `${rel} imports ${s}: the UI imports values only from the store (types from anywhere)`;
  if (PAGE_LAYERS.includes(from) && !PAGE_LAYERS.includes(target) && !PAGE_SAFE.includes(target) && !imp.typeOnly)
    return `${rel} imports ${s}: the page imports values from below only from the page-safe layers (PAGE_SAFE in src/layers.ts)`;
  return null;
}

/** The file an import names (its .ts, .tsx or folder index), or null for a package or a file that is not there. */
function resolveImport(file: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const p = resolve(dirname(file), specifier.replace(/\?.*$/, ''));
  for (const c of [p, `${p}.ts`, `${p}.tsx`, join(p, 'index.ts'), join(p, 'index.tsx')])
    if (existsSync(c) && statSync(c).isFile()) return c;
  return null;
}

/** Every file and package `starts` (paths under src/) load through value imports, static and dynamic, all the way down. */
export function closureOf(starts: readonly string[]): { files: string[]; packages: string[] } {
  const files = new Set<string>(starts.map((s) => join(SRC, s)));
  const packages = new Set<string>();
  const queue = [...files];
  while (queue.length) {
    const f = queue.shift()!;
    if (!/\.tsx?$/.test(f)) continue;
    for (const imp of importsOf(f, readFileSync(f, 'utf8'))) {
      if (imp.typeOnly) continue;
      if (!imp.specifier.startsWith('.')) {
        packages.add(imp.specifier);
        continue;
      }
      const target = resolveImport(f, imp.specifier);
      if (target === null) throw new Error(`${relative(SRC, f)} imports ${imp.specifier}, which is not there`);
      if (!files.has(target)) {
        files.add(target);
        queue.push(target);
      }
    }
  }
  return {
    files: [...files].map((f) => relative(SRC, f).split('\\').join('/')).sort(),
    packages: [...packages].sort(),
  };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [p] : [];
  });
}

describe('layers', () => {
  it('one product place makes a trainer: every driver runs through a RunSession', () => {
    const makers = sourceFiles(SRC)
      .map((f) => relative(SRC, f).split('\\').join('/'))
      .filter(
        (rel) =>
          !isTestSupport(rel) &&
          /\bTrainer\.create\(/.test(readFileSync(join(SRC, rel), 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '')),
      );
    expect(makers).toEqual(['engine/run-session.ts']);
  });

  it('every import of src/ points down the layers', () => {
    const problems: string[] = [];
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    for (const f of files) {
      const rel = relative(SRC, f).split('\\').join('/');
      for (const imp of importsOf(rel, readFileSync(f, 'utf8'))) {
        const v = violation(rel, imp);
        if (v) problems.push(v);
      }
    }
    expect(problems).toEqual([]);
  });

  const page = closureOf(['main.tsx']);
  const below = page.files.filter((f) => {
    const l = layerOf(f);
    return l === null || !PAGE_LAYERS.includes(l);
  });

  it(`the page reaches ${page.files.length} files from main.tsx (${below.length} below it), none of them GPU, kernel, WGSL or trainer code`, () => {
    console.log(`main.tsx reaches ${page.files.length} files by value imports, ${below.length} of them below the page`);
    const never = (files: string[]) => files.filter((f) => PAGE_NEVER.some((re) => re.test(f)));
    expect(never(page.files)).toEqual([]);
    // Below the page, the page reaches nothing but the page-safe layers and what they load.
    expect(page.files.filter((f) => layerOf(f) === null)).toEqual([]);
    const pagePackages = ['react', 'react-dom', 'recharts', 'zustand'];
    expect(page.packages.filter((p) => !pagePackages.some((name) => p === name || p.startsWith(`${name}/`)))).toEqual(
      [],
    );
  });

  it('the page-safe layers sit below the page', () => {
    for (const l of PAGE_SAFE) expect(ORDER.indexOf(l)).toBeGreaterThan(ORDER.indexOf('store'));
  });

  it('docs/architecture.md quotes the layer order of src/layers.ts', () => {
    expect(LAYER_LINE).toBe(
      'main.tsx, cli -> ui -> store -> lessons -> worker client ~> worker -> bench -> engine -> export -> rl -> model -> kernels -> reference -> gpu -> io -> hub -> schema -> tasks -> core',
    );
    const architecture = readFileSync(join(SRC, '..', 'docs', 'architecture.md'), 'utf8');
    const block = architecture
      .slice(architecture.indexOf('## The dependency rule'))
      .match(/```text\n([\s\S]*?)```/)?.[1];
    expect(block?.replace(/\s+/g, ' ').trim()).toBe(LAYER_LINE);
  });

  it('the rule catches what it should', () => {
    const v = (rel: string, text: string) =>
      importsOf(rel, text)
        .map((i) => violation(rel, i))
        .filter(Boolean);
    expect(v('kernels/x.ts', "import { Trainer } from '../rl/trainer';")).toEqual([
      'kernels/x.ts imports ../rl/trainer: kernels may not import from rl, a layer above it',
    ]);
    expect(v('reference/x.ts', "import type { Policy } from '../model/policy';")).toEqual([]);
    expect(v('reference/x.ts', "import { GpuPolicy } from '../model/policy';")).toHaveLength(1);
    expect(v('ui/X.tsx', "import { RL_FIELDS } from '../rl/config';")).toEqual([
      'ui/X.tsx imports ../rl/config: the UI imports values only from the store (types from anywhere)',
    ]);
    expect(v('ui/X.tsx', "import type { RLConfig } from '../rl/config';\nimport { useLab } from '../store';")).toEqual(
      [],
    );
    expect(v('ui/X.tsx', "const m = import('../bench/suite');")).toHaveLength(1);
    expect(v('engine/x.ts', "import { create } from 'zustand';")).toEqual([
      'engine/x.ts imports the package zustand, which only store, ui may use',
    ]);
    expect(
      v('model/x.ts', "export { Tensor } from '../gpu/tensor';\nimport src from '../../shaders/x.wgsl?raw';"),
    ).toEqual([]);
    expect(v('schema/x.ts', "// import { X } from '../rl/config';\nconst a = 1;")).toEqual([]);
    expect(v('store/x.ts', "import { RunSession } from '../engine/run-session';")).toEqual([
      'store/x.ts imports ../engine/run-session: the page imports values from below only from the page-safe layers (PAGE_SAFE in src/layers.ts)',
    ]);
    expect(v('store/slices/x.ts', "import { describeAdapter } from '../../gpu/adapter';")).toHaveLength(1);
    expect(
      v(
        'store/slices/x.ts',
        "import type { AdapterReport } from '../../gpu/adapter';\nimport { lessonRunConfig } from '../../lessons/results';",
      ),
    ).toEqual([]);
    expect(
      v(
        'store/x.ts',
        "import { LESSONS } from '../lessons';\nimport { RL_FIELDS } from '../schema/config/schema';\nimport { computeAdvantages } from '../rl/algorithm/advantages';",
      ),
    ).toEqual([
      'store/x.ts imports ../rl/algorithm/advantages: the page imports values from below only from the page-safe layers (PAGE_SAFE in src/layers.ts)',
    ]);
    expect(v('main.tsx', "import { Trainer } from './rl/algorithm/trainer';")).toHaveLength(1);
    expect(v('kernels/x.ts', "import { useNodeDevice } from '../testing/test-device';")).toEqual([
      'kernels/x.ts imports ../testing/test-device: testing/ is test support, for tests only',
    ]);
    expect(v('kernels/x.ts', "import { it } from 'vitest';")).toEqual([
      'kernels/x.ts imports vitest: only tests and testing/ may use vitest',
    ]);
    expect(
      v(
        'testing/x.ts',
        "import { it } from 'vitest';\nimport { Trainer } from '../rl/trainer';\nimport { create } from 'webgpu';",
      ),
    ).toEqual([]);
  });
});
