// The registry of shared WGSL blocks: it holds exactly the files of shaders/blocks under their names, and every
// shader that includes blocks expands to a module with each shared definition once and no marker left.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WGSL_BLOCKS, withBlocks } from './wgsl-blocks';

const shaderDir = new URL('../../shaders/', import.meta.url);

describe('WGSL_BLOCKS', () => {
  it('registers every file of shaders/blocks, by its name, with its text', () => {
    const files = readdirSync(new URL('blocks/', shaderDir)).filter((f) => f.endsWith('.wgsl'));
    expect(Object.keys(WGSL_BLOCKS).sort()).toEqual(files.map((f) => f.replace(/\.wgsl$/, '')).sort());
    for (const f of files) expect(WGSL_BLOCKS[f.replace(/\.wgsl$/, '')], f).toBe(readFileSync(new URL(`blocks/${f}`, shaderDir), 'utf8'));
  });

  it('expands each including shader with the row layout defined once and no include left', () => {
    const including = readdirSync(shaderDir).filter((f) => f.endsWith('.wgsl') && /^\/\/ @include /m.test(readFileSync(new URL(f, shaderDir), 'utf8')));
    expect(including.sort()).toEqual(['cross-entropy.wgsl', 'kl.wgsl', 'logprob.wgsl', 'sampler.wgsl', 'softmax.wgsl']);
    for (const f of including) {
      const out = withBlocks(readFileSync(new URL(f, shaderDir), 'utf8'), f);
      expect(out, f).not.toMatch(/^\s*\/\/\s*@include/m);
      expect(out.match(/^override LANES\b/gm), f).toHaveLength(1);
      expect(out.match(/^fn row_of\(/gm), f).toHaveLength(1);
    }
  });
});
