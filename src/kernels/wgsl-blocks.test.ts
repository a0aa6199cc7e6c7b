// The registry of shared WGSL blocks: it holds exactly the files of shaders/blocks under their names, each block
// written once, there. A shader as written holds, in a region of a block's name, only stand-ins: declarations of
// the block (or of the blocks it includes) with the block's exact signatures and trivial bodies, only those the
// shader uses; checked here against the block's text, they cannot drift from it. Filled (fillBlockRegions, as
// declareShader does), each shader holds each block once; the 'subgroups' variant enables the extension and swaps
// only the lane merges.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { blockText, fillBlockRegions, regionNames } from '../gpu/specialize';
import { ROW_REDUCTION_FAMILIES, WGSL_BLOCKS, withRowReduction, type RowReduction } from './wgsl-blocks';

const shaderDir = new URL('../../shaders/', import.meta.url);
const shaders = readdirSync(shaderDir).filter((f) => f.endsWith('.wgsl'));
const read = (f: string) => readFileSync(new URL(f, shaderDir), 'utf8');
const filled = (f: string) => fillBlockRegions(read(f), WGSL_BLOCKS, f);
/** `wgsl` without its comments, line and block ones. */
const code = (wgsl: string) => wgsl.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
const isBlock = (name: string) => Object.hasOwn(WGSL_BLOCKS, name);

/**
 * The module-scope declarations of `wgsl` in order: name -> signature, with whitespace dropped: a function's up to
 * its body, a struct's whole (a trailing comma dropped), anything else its whole declaration, initializer included.
 */
function declarations(wgsl: string, where: string): Map<string, string> {
  const text = code(wgsl);
  const out = new Map<string, string>();
  let start = 0;
  let depth = 0;
  const take = (end: number) => {
    const decl = text.slice(start, end).trim();
    start = end;
    const m = /^(?:@\w+(?:\([^)]*\))?\s*)*(fn|struct|alias|const|override|var(?:<[^>]*>)?)\s+(\w+)/.exec(decl);
    if (!m) throw new Error(`${where}: not a module-scope declaration: "${decl}"`);
    if (out.has(m[2])) throw new Error(`${where}: ${m[2]} is declared twice`);
    const signature = m[1] === 'fn' ? decl.slice(0, decl.indexOf('{')) : decl;
    out.set(m[2], signature.replace(/\s+/g, '').replace(/,}/g, '}'));
  };
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) take(i + 1);
    else if (text[i] === ';' && depth === 0) take(i + 1);
  }
  if (text.slice(start).trim() !== '')
    throw new Error(`${where}: unfinished declaration "${text.slice(start).trim()}"`);
  return out;
}

/** The outermost regions of a shader as written that are named after a block: name, stand-ins, the rest. */
function blockRegions(f: string): { block: string; standIns: string; rest: string }[] {
  const text = read(f);
  return regionNames(text, f)
    .filter(isBlock)
    .map((block) => {
      const region = new RegExp(`^// @region ${block}\\n([\\s\\S]*?)^// @end ${block}\\n`, 'm').exec(text);
      if (!region) throw new Error(`${f}: region ${block} is not at the start of lines`);
      return { block, standIns: region[1], rest: text.replace(region[0], '') };
    });
}

describe('WGSL_BLOCKS', () => {
  it('registers every file of shaders/blocks, by its name, with its text', () => {
    const files = readdirSync(new URL('blocks/', shaderDir)).filter((f) => f.endsWith('.wgsl'));
    expect(Object.keys(WGSL_BLOCKS).sort()).toEqual(files.map((f) => f.replace(/\.wgsl$/, '')).sort());
    for (const f of files) expect(WGSL_BLOCKS[f.replace(/\.wgsl$/, '')], f).toBe(read(`blocks/${f}`));
  });

  it('stand in a shader as written only by declarations of the block, each exactly as the block declares it', () => {
    let standIns = 0;
    for (const f of shaders)
      for (const { block, standIns: text, rest } of blockRegions(f)) {
        const where = `${f} region ${block}`;
        expect(text, `${where}: stand-ins only, no regions inside`).not.toMatch(/@region|@end/);
        const real = declarations(blockText(block, WGSL_BLOCKS), `block ${block}`);
        const own = declarations(text, where);
        expect(own.size, `${where}: no stand-ins`).toBeGreaterThan(0);
        for (const [name, signature] of own) {
          expect(real.get(name), `${where}: ${name} as block ${block} declares it`).toBe(signature);
          // Only what the shader uses: its own code names it, or another stand-in's signature does.
          const others = [...own].filter(([n]) => n !== name).map(([, s]) => s);
          const uses = new RegExp(`\\b${name}\\b`);
          expect(uses.test(code(rest)) || others.some((s) => uses.test(s)), `${where}: ${name} is not used`).toBe(true);
          standIns++;
        }
      }
    expect(standIns).toBeGreaterThan(0);
  });

  it('fill each shader that uses one with its whole text, once', () => {
    const using = shaders.filter((f) => blockRegions(f).length > 0);
    const halfBits = ['decode.wgsl', 'half-pack.wgsl', 'rope.wgsl'];
    const rowKernels = ['cross-entropy.wgsl', 'kl.wgsl', 'logprob.wgsl', 'sampler.wgsl', 'softmax.wgsl'];
    const attentionRows = ['attention-rows.wgsl', 'attention-rows-looped.wgsl'];
    expect(using.sort()).toEqual([...rowKernels, ...halfBits, ...attentionRows].sort());
    for (const f of using) {
      for (const { block } of blockRegions(f))
        expect(filled(f).split(blockText(block, WGSL_BLOCKS)), f).toHaveLength(2);
      expect(fillBlockRegions(filled(f), WGSL_BLOCKS, f), `${f}: filling is idempotent`).toBe(filled(f));
    }
    for (const f of rowKernels) {
      // kl.wgsl has merges of its own and holds only row-layout: one variant.
      const variants: RowReduction[] = f === 'kl.wgsl' ? ['workgroup'] : ['workgroup', 'subgroups'];
      for (const reduction of variants) {
        const out = withRowReduction(filled(f), f, reduction);
        expect(out.match(/^override LANES\b/gm), f).toHaveLength(1);
        expect(out.match(/^fn row_of\(/gm), f).toHaveLength(1);
      }
    }
    // The half rounding is written once (block half-bits) and enters each shader that stores half.
    for (const f of halfBits)
      for (const fn of ['bf16_bits', 'f16_bits'])
        expect(filled(f).match(new RegExp(`^fn ${fn}\\(`, 'gm')), `${f} ${fn}`).toHaveLength(1);
    // Both forms of attention-rows take their constants, output bindings and thread index from block attention-rows-head.
    for (const f of attentionRows)
      for (const line of [/^const HD4: u32 = 1u;/gm, /^fn thread_of\(/gm, /var<storage, read_write> o1:/gm])
        expect(filled(f).match(line), `${f} ${line}`).toHaveLength(1);
  });

  it("the 'subgroups' variant differs from the default only in region row-lanes", () => {
    for (const f of ROW_REDUCTION_FAMILIES.map((family) => `${family}.wgsl`)) {
      const workgroup = withRowReduction(filled(f), f);
      const subgroups = withRowReduction(filled(f), f, 'subgroups');
      expect(workgroup, f).toBe(filled(f));
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
