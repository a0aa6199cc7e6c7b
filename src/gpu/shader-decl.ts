// A kernel family's WGSL declarations made once in TypeScript, its uniform structs (src/gpu/params.ts) and its
// constants (enum codes, sizes the wrapper shares), checked against the shader as written: the file declares each
// struct exactly as UniformStruct.wgsl() writes it and each constant as `const NAME: u32 = valueu;` (a group
// { a: 0 } named G: G_A), so the WGSL file is complete as written and cannot drift from the wrapper's packing.
// A shader that uses shared blocks (shaders/blocks, src/kernels/wgsl-blocks.ts) holds only stand-ins for them as
// written; its declaration gets the blocks and holds the shader with each block's text in place of its stand-ins,
// the source every kernel of the family compiles or specializes.

import type { UniformStruct } from './params';
import { fillBlockRegions } from './specialize';

/** A constant, or a group of codes named GROUP_KEY (key upper-cased, dashes as underscores). */
export type ConstValue = number | Readonly<Record<string, number>>;

export interface ShaderDeclaration {
  /** shaders/<file>, for messages and the drift test. */
  readonly file: string;
  /**
   * The shader as written with each region named after a shared block holding that block's text
   * (fillBlockRegions) in place of the stand-ins: what the family compiles, or makes variants of through
   * src/gpu/specialize.ts. Without block regions, the file exactly as written.
   */
  readonly source: string;
  readonly uniforms: readonly UniformStruct[];
  /** The constants as emitted: WGSL name -> value. */
  readonly consts: Readonly<Record<string, number>>;
}

/** The WGSL names and values of `consts`, groups flattened. */
export function flattenConsts(consts: Readonly<Record<string, ConstValue>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, v] of Object.entries(consts)) {
    const entries =
      typeof v === 'number'
        ? [[name, v] as const]
        : Object.entries(v).map(([k, c]) => [`${name}_${k.toUpperCase().replaceAll('-', '_')}`, c] as const);
    for (const [n, c] of entries) {
      if (!/^[A-Z][A-Z0-9_]*$/.test(n)) throw new Error(`constant "${n}" is not an upper-case WGSL identifier`);
      if (!Number.isInteger(c) || c < 0 || c > 0xffffffff) throw new Error(`constant ${n} = ${c} is not a u32`);
      if (Object.hasOwn(out, n)) throw new Error(`constant ${n} is declared twice`);
      out[n] = c;
    }
  }
  return out;
}

/** The line that declares constant `name` in a shader. */
export const constLine = (name: string, value: number) => `const ${name}: u32 = ${value}u;`;

/**
 * The declaration of shaders/`file`, whose text as written is `written`: with `blocks` (block name -> text, the
 * registry src/kernels/wgsl-blocks.ts) its block regions are filled. Checks that the filled source declares each
 * of `decl`'s uniform structs exactly as UniformStruct.wgsl() writes it (once) and each constant as constLine
 * writes it (once); throws naming the file and the first mismatch.
 */
export function declareShader(
  file: string,
  written: string,
  decl: {
    uniforms: readonly UniformStruct[];
    consts?: Readonly<Record<string, ConstValue>>;
    blocks?: Readonly<Record<string, string>>;
  },
): ShaderDeclaration {
  const source = decl.blocks ? fillBlockRegions(written, decl.blocks, file) : written;
  const consts = flattenConsts(decl.consts ?? {});
  const count = (text: string) => source.split(text).length - 1;
  for (const u of decl.uniforms) {
    const n = count(u.wgsl());
    if (n !== 1)
      throw new Error(
        `${file}: struct ${u.name} must be declared once exactly as its UniformStruct writes it, found ${n}:\n${u.wgsl()}`,
      );
    const named = [...source.matchAll(new RegExp(`^\\s*struct\\s+${u.name}\\b`, 'gm'))].length;
    if (named !== 1) throw new Error(`${file}: struct ${u.name} is declared ${named} times`);
  }
  for (const [name, value] of Object.entries(consts)) {
    const lines = source.split('\n').filter((l) => new RegExp(`^\\s*const\\s+${name}\\b`).test(l));
    if (lines.length !== 1 || lines[0].trim() !== constLine(name, value))
      throw new Error(`${file}: constant ${name} must be declared once as "${constLine(name, value)}"`);
  }
  return { file, source, uniforms: decl.uniforms, consts };
}
