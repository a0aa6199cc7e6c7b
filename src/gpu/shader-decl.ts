// A kernel family's WGSL declarations made once, in TypeScript: its uniform structs (src/gpu/params.ts) and its
// constants (enum codes, sizes the wrapper shares). The shader holds markers: a line `// @uniforms Name` becomes
// struct Name, a line `// @consts` every constant as `const NAME: u32 = value;` (a group { a: 0 } named G: G_A).

import type { UniformStruct } from './params';

/** A constant, or a group of codes named GROUP_KEY (key upper-cased, dashes as underscores). */
export type ConstValue = number | Readonly<Record<string, number>>;

export interface ShaderDeclaration {
  /** shaders/<file>, for messages and the drift test. */
  readonly file: string;
  /** The shader as written, with its markers. */
  readonly raw: string;
  /** The shader with the declarations in place of the markers; other template markers stay. */
  readonly source: string;
  readonly uniforms: readonly UniformStruct[];
  /** The constants as emitted: WGSL name -> value. */
  readonly consts: Readonly<Record<string, number>>;
}

const UNIFORMS = /^\s*\/\/ @uniforms ([A-Za-z][A-Za-z0-9_]*)\s*$/;
const CONSTS = /^\s*\/\/ @consts\s*$/;

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

/** Expands `raw`'s `// @uniforms` and `// @consts` lines; each declared struct and the constants need one marker. */
export function declareShader(
  file: string,
  raw: string,
  decl: { uniforms: readonly UniformStruct[]; consts?: Readonly<Record<string, ConstValue>> },
): ShaderDeclaration {
  const consts = flattenConsts(decl.consts ?? {});
  const structs = new Map(decl.uniforms.map((u) => [u.name, u]));
  const placed = new Set<string>();
  let constsPlaced = false;
  const source = raw
    .split('\n')
    .map((line) => {
      const u = UNIFORMS.exec(line);
      if (u) {
        const s = structs.get(u[1]);
        if (!s) throw new Error(`${file}: "// @uniforms ${u[1]}" names no declared uniform struct`);
        if (placed.has(u[1])) throw new Error(`${file}: struct ${u[1]} is placed twice`);
        placed.add(u[1]);
        return s.wgsl();
      }
      if (CONSTS.test(line)) {
        if (constsPlaced) throw new Error(`${file}: "// @consts" appears twice`);
        constsPlaced = true;
        return Object.entries(consts)
          .map(([n, v]) => `const ${n}: u32 = ${v}u;`)
          .join('\n');
      }
      if (/^\s*\/\/\s*@(uniforms|consts)\b/.test(line)) throw new Error(`${file}: malformed marker "${line.trim()}"`);
      return line;
    })
    .join('\n');
  for (const name of structs.keys()) {
    if (!placed.has(name))
      throw new Error(`${file}: uniform struct ${name} is declared but has no "// @uniforms ${name}" line`);
    if (new RegExp(`\\bstruct\\s+${name}\\b`).test(raw))
      throw new Error(`${file}: struct ${name} is written by hand; it is generated`);
  }
  if (Object.keys(consts).length > 0 && !constsPlaced)
    throw new Error(`${file}: constants are declared but there is no "// @consts" line`);
  if (Object.keys(consts).length === 0 && constsPlaced)
    throw new Error(`${file}: "// @consts" but no constants are declared`);
  return { file, raw, source, uniforms: decl.uniforms, consts };
}
