// The layer rule of README.md and docs/architecture.md, read from the imports of every file under src/:
//   entry points (main.tsx, cli) -> ui -> store -> worker -> bench -> engine -> export -> rl -> tasks -> model -> kernels
//   -> reference -> gpu -> schema
// A module imports only from its own layer or lower ones; the UI imports values only from the store (types from
// anywhere); React, zustand and recharts stay above the worker; the `webgpu` package stays in src/gpu.
// Tests (*.test.ts) and the test support under src/testing/ (Vitest preambles such as the GPU test device) may reach
// anywhere; product code imports neither src/testing/ nor vitest.

import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

/** Layers from the top; a layer may import from itself and the layers after it. */
const ORDER = ['main', 'cli', 'ui', 'store', 'lessons', 'worker', 'bench', 'engine', 'export', 'rl', 'tasks', 'model', 'kernels', 'reference', 'gpu', 'schema'] as const;
type Layer = (typeof ORDER)[number];

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
  for (const m of code.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ from: file, specifier: m[1], typeOnly: false });
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
    if (s === 'vitest' || s.startsWith('vitest/')) return `${rel} imports ${s}: only tests and ${TEST_SUPPORT}/ may use vitest`;
    const allowed = PACKAGES[s];
    return allowed && !allowed.includes(from) ? `${rel} imports the package ${s}, which only ${allowed.join(', ')} may use` : null;
  }
  const targetRel = relative(SRC, resolve(SRC, dirname(rel), s)).split('\\').join('/');
  if (isTestSupport(targetRel)) return `${rel} imports ${s}: ${TEST_SUPPORT}/ is test support, for tests only`;
  const target = layerOf(targetRel);
  if (target === null || target === from) return null;
  if (ORDER.indexOf(target) < ORDER.indexOf(from)) return `${rel} imports ${s}: ${from} may not import from ${target}, a layer above it`;
  if (from === 'ui' && target !== 'store' && !imp.typeOnly) return `${rel} imports ${s}: the UI imports values only from the store (types from anywhere)`;
  return null;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [p] : [];
  });
}

describe('layers', () => {
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

  it('the rule catches what it should', () => {
    const v = (rel: string, text: string) => importsOf(rel, text).map((i) => violation(rel, i)).filter(Boolean);
    expect(v('kernels/x.ts', "import { Trainer } from '../rl/trainer';")).toEqual(['kernels/x.ts imports ../rl/trainer: kernels may not import from rl, a layer above it']);
    expect(v('reference/x.ts', "import type { RLConfig } from '../rl/config';")).toHaveLength(1);
    expect(v('ui/X.tsx', "import { RL_FIELDS } from '../rl/config';")).toEqual(['ui/X.tsx imports ../rl/config: the UI imports values only from the store (types from anywhere)']);
    expect(v('ui/X.tsx', "import type { RLConfig } from '../rl/config';\nimport { useLab } from '../store';")).toEqual([]);
    expect(v('ui/X.tsx', "const m = import('../bench/suite');")).toHaveLength(1);
    expect(v('engine/x.ts', "import { create } from 'zustand';")).toEqual(['engine/x.ts imports the package zustand, which only store, ui may use']);
    expect(v('model/x.ts', "export { Tensor } from '../gpu/tensor';\nimport src from '../../shaders/x.wgsl?raw';")).toEqual([]);
    expect(v('schema/x.ts', "// import { X } from '../rl/config';\nconst a = 1;")).toEqual([]);
    expect(v('kernels/x.ts', "import { useNodeDevice } from '../testing/test-device';")).toEqual(['kernels/x.ts imports ../testing/test-device: testing/ is test support, for tests only']);
    expect(v('kernels/x.ts', "import { it } from 'vitest';")).toEqual(['kernels/x.ts imports vitest: only tests and testing/ may use vitest']);
    expect(v('testing/x.ts', "import { it } from 'vitest';\nimport { Trainer } from '../rl/trainer';\nimport { create } from 'webgpu';")).toEqual([]);
  });
});
