// The registry of shared WGSL blocks: it holds exactly the files of shaders/blocks under their names; every shader
// as written holds each block it uses, in a region of the block's name, exactly as the block reads (filled with
// the blocks it includes), so each file is complete WGSL; the 'subgroups' variant enables the extension and swaps
// only the lane merges.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { blockText, fillBlockRegions, regionNames } from '../gpu/specialize';
import { ROW_REDUCTION_FAMILIES, WGSL_BLOCKS, withRowReduction, type RowReduction } from './wgsl-blocks';

const shaderDir = new URL('../../shaders/', import.meta.url);
const shaders = readdirSync(shaderDir).filter((f) => f.endsWith('.wgsl'));
const read = (f: string) => readFileSync(new URL(f, shaderDir), 'utf8');

describe('WGSL_BLOCKS', () => {
  it('registers every file of shaders/blocks, by its name, with its text', () => {
    const files = readdirSync(new URL('blocks/', shaderDir)).filter((f) => f.endsWith('.wgsl'));
    expect(Object.keys(WGSL_BLOCKS).sort()).toEqual(files.map((f) => f.replace(/\.wgsl$/, '')).sort());
    for (const f of files) expect(WGSL_BLOCKS[f.replace(/\.wgsl$/, '')], f).toBe(read(`blocks/${f}`));
  });

  it('stands in every shader that uses it exactly as written in shaders/blocks (fillBlockRegions to refresh)', () => {
    for (const f of shaders)
      expect(read(f), `${f}: a block region differs from its block`).toBe(fillBlockRegions(read(f), WGSL_BLOCKS, f));
    const using = shaders.filter((f) => regionNames(read(f), f).some((n) => Object.hasOwn(WGSL_BLOCKS, n)));
    const halfBits = ['decode.wgsl', 'half-pack.wgsl'];
    const rowKernels = ['cross-entropy.wgsl', 'kl.wgsl', 'logprob.wgsl', 'sampler.wgsl', 'softmax.wgsl'];
    const attentionRows = ['attention-rows.wgsl', 'attention-rows-looped.wgsl'];
    expect(using.sort()).toEqual([...rowKernels, ...halfBits, ...attentionRows].sort());
    for (const f of rowKernels) {
      // kl.wgsl has merges of its own and holds only row-layout: one variant.
      const variants: RowReduction[] = f === 'kl.wgsl' ? ['workgroup'] : ['workgroup', 'subgroups'];
      for (const reduction of variants) {
        const out = withRowReduction(read(f), f, reduction);
        expect(out.match(/^override LANES\b/gm), f).toHaveLength(1);
        expect(out.match(/^fn row_of\(/gm), f).toHaveLength(1);
      }
    }
    // The half rounding is written once (block half-bits) and stands in each shader that stores half.
    for (const f of halfBits)
      for (const fn of ['bf16_bits', 'f16_bits'])
        expect(read(f).match(new RegExp(`^fn ${fn}\\(`, 'gm')), `${f} ${fn}`).toHaveLength(1);
    // Both forms of attention-rows take their constants, output bindings and thread index from block attention-rows-head.
    for (const f of attentionRows)
      for (const line of [/^const HD4: u32 = 1u;/gm, /^fn thread_of\(/gm, /var<storage, read_write> o1:/gm])
        expect(read(f).match(line), `${f} ${line}`).toHaveLength(1);
  });

  it("the 'subgroups' variant differs from the default only in region row-lanes", () => {
    for (const f of ROW_REDUCTION_FAMILIES.map((family) => `${family}.wgsl`)) {
      const workgroup = withRowReduction(read(f), f);
      const subgroups = withRowReduction(read(f), f, 'subgroups');
      expect(workgroup, f).toBe(read(f));
      expect(workgroup, f).not.toMatch(/enable subgroups|subgroupShuffleXor/);
      expect(subgroups.startsWith('enable subgroups;\n'), f).toBe(true);
      for (const fn of ['lanes_sum', 'lanes_max', 'lanes_argmax'])
        expect(subgroups.match(new RegExp(`^fn ${fn}\\(`, 'gm')), `${f} ${fn}`).toHaveLength(1);
      expect(
        subgroups.replace('enable subgroups;\n', '').replace(blockText('row-lanes-subgroup', WGSL_BLOCKS), '@'),
        f,
      ).toBe(workgroup.replace(blockText('row-lanes', WGSL_BLOCKS), '@'));
    }
  });
});
