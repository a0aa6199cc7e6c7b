// The registry of shared WGSL blocks: it holds exactly the files of shaders/blocks under their names, and every
// shader that includes blocks expands, in both row reduction variants, to a module with each shared definition
// once and no marker left; the 'subgroups' variant enables the extension and swaps only the lane merges.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROW_REDUCTION_FAMILIES, WGSL_BLOCKS, withBlocks, type RowReduction } from './wgsl-blocks';

const shaderDir = new URL('../../shaders/', import.meta.url);

describe('WGSL_BLOCKS', () => {
  it('registers every file of shaders/blocks, by its name, with its text', () => {
    const files = readdirSync(new URL('blocks/', shaderDir)).filter((f) => f.endsWith('.wgsl'));
    expect(Object.keys(WGSL_BLOCKS).sort()).toEqual(files.map((f) => f.replace(/\.wgsl$/, '')).sort());
    for (const f of files)
      expect(WGSL_BLOCKS[f.replace(/\.wgsl$/, '')], f).toBe(readFileSync(new URL(`blocks/${f}`, shaderDir), 'utf8'));
  });

  it('expands each including shader with the row layout defined once and no include left', () => {
    const including = readdirSync(shaderDir).filter(
      (f) => f.endsWith('.wgsl') && /^\/\/ @include /m.test(readFileSync(new URL(f, shaderDir), 'utf8')),
    );
    const halfBits = ['decode.wgsl', 'half-pack.wgsl'];
    const rowKernels = ['cross-entropy.wgsl', 'kl.wgsl', 'logprob.wgsl', 'sampler.wgsl', 'softmax.wgsl'];
    const attentionRows = ['attention-rows.wgsl', 'attention-rows-looped.wgsl'];
    expect(including.sort()).toEqual([...rowKernels, ...halfBits, ...attentionRows].sort());
    for (const f of rowKernels) {
      for (const reduction of ['workgroup', 'subgroups'] as RowReduction[]) {
        const out = withBlocks(readFileSync(new URL(f, shaderDir), 'utf8'), f, reduction);
        expect(out, f).not.toMatch(/^\s*\/\/\s*@include/m);
        expect(out.match(/^override LANES\b/gm), f).toHaveLength(1);
        expect(out.match(/^fn row_of\(/gm), f).toHaveLength(1);
      }
    }
    // The half rounding is written once (block half-bits) and pasted into each shader that stores half.
    for (const f of halfBits) {
      const out = withBlocks(readFileSync(new URL(f, shaderDir), 'utf8'), f);
      expect(out, f).not.toMatch(/^\s*\/\/\s*@include/m);
      for (const fn of ['bf16_bits', 'f16_bits'])
        expect(out.match(new RegExp(`^fn ${fn}\\(`, 'gm')), `${f} ${fn}`).toHaveLength(1);
    }
    // Both forms of attention-rows take their constants, output bindings and thread index from block attention-rows-head.
    for (const f of attentionRows) {
      const out = withBlocks(readFileSync(new URL(f, shaderDir), 'utf8'), f);
      expect(out, f).not.toMatch(/^\s*\/\/\s*@include/m);
      for (const line of [/^const HD4: u32 = __HD4__u;$/gm, /^fn thread_of\(/gm, /var<storage, read_write> o1:/gm])
        expect(out.match(line), `${f} ${line}`).toHaveLength(1);
    }
  });

  it("the 'subgroups' variant differs from the default only where block row-lanes was included", () => {
    for (const f of ROW_REDUCTION_FAMILIES.map((family) => `${family}.wgsl`)) {
      const source = readFileSync(new URL(f, shaderDir), 'utf8');
      const workgroup = withBlocks(source, f);
      const subgroups = withBlocks(source, f, 'subgroups');
      expect(workgroup, f).not.toMatch(/enable subgroups|subgroupShuffleXor/);
      expect(subgroups.startsWith('enable subgroups;\n'), f).toBe(true);
      for (const fn of ['lanes_sum', 'lanes_max', 'lanes_argmax'])
        expect(subgroups.match(new RegExp(`^fn ${fn}\\(`, 'gm')), `${f} ${fn}`).toHaveLength(1);
      // Each block as it stands in a shader: its own include (row-layout) expanded, the final newline dropped.
      const pasted = (block: string) => withBlocks(WGSL_BLOCKS[block], block).replace(/\n$/, '');
      expect(subgroups.replace('enable subgroups;\n', '').replace(pasted('row-lanes-subgroup'), '@'), f).toBe(
        workgroup.replace(pasted('row-lanes'), '@'),
      );
    }
    // kl.wgsl has merges of its own and includes only row-layout: the same text in both variants, no extension.
    const kl = readFileSync(new URL('kl.wgsl', shaderDir), 'utf8');
    expect(withBlocks(kl, 'kl.wgsl', 'workgroup')).not.toMatch(/subgroup/);
  });
});
