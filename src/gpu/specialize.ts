// The one WGSL specializer: turns a shader as written (valid WGSL, its defaults in place) into the text a kernel
// family compiles, for what pipeline-overridable constants cannot express. Text in, text out: it reads no files
// (shaders arrive through `?raw` imports, Vite's in the browser and src/cli/raw-loader.mjs in Node; the shared
// blocks' registry is src/kernels/wgsl-blocks.ts). Three operations, applied in this order:
//   regions  the lines between `// @region name` and `// @end name` replaced by other text: the row kernels swap
//            block row-lanes for row-lanes-subgroup, rmsnorm swaps the sum of a value's components. A region
//            `as-written` is always dropped, markers too: it declares what only the file as written needs (the
//            repetition indices below, at copy 0).
//   values   the initializer of a module-scope `const NAME ... = x;`, `override NAME ... = x;` or the type of
//            `alias NAME = T;` replaced: sizes that shape private arrays or unrolled code (head dim, rows per
//            thread, a matmul tile) and the value type V of the flat kernels (f32 or vec4<f32>).
//   repeats  a code line ending in `// @marker` written out `count` times, copy i with each index token (an
//            identifier piece `_name` not followed by a letter or digit, such as `_t` in `let t_t = q[_t];`)
//            replaced by its value for i; a line ending in `// @a @b` is repeated by a's pass and its copies keep
//            `// @b` for b's pass (a later repeat), so a line tiled in two dimensions lists the outer one first. A
//            repeat may name a sum function: `sum_c(expr)` becomes (expr at copy 0 + ... + expr at copy count - 1),
//            on every code line, before that pass repeats lines.
// Blocks come before all three. A shared block (shaders/blocks/name.wgsl) is written once, there: in a
// shader as written, a region of the block's name holds only stand-ins, the block's declarations that the shader
// uses with the block's exact signatures and trivial bodies, so that the file compiles alone; the shader's
// declaration (src/gpu/shader-decl.ts, declareShader with the registry src/kernels/wgsl-blocks.ts) puts the
// block's whole text in their place (fillBlockRegions, a block's own regions filled from the blocks it includes),
// and that is the source every kernel compiles or specializes. src/kernels/wgsl-blocks.test.ts checks that each
// stand-in is declared in its block exactly so, and src/gpu/shaders-as-written.test.ts that each file compiles.
// Written-out code exists because compilers such as SwiftShader's do not unroll loops or keep dynamically indexed
// private arrays in registers (shaders/attention-rows.wgsl, matmul.wgsl's matmul_wide); LLVM-based drivers
// (lavapipe) pay for it in compile time instead, so attention-rows-looped.wgsl keeps its loops. Comment lines are
// never changed, except by a region.

/** One pass of line repetition. */
export interface Repeat {
  /** The marker a repeated line ends with, without its `@`: lower-case letters, digits and dashes. */
  readonly marker: string;
  /** How many copies, >= 1. */
  readonly count: number;
  /** The index tokens' values in copy i: token (`_name`) -> value. */
  readonly tokens: (i: number) => Readonly<Record<string, number>>;
  /** A function name whose calls become sums over this pass's copies (`sum_c`). */
  readonly sum?: string;
}

export interface Specialization {
  /** Region name -> the text between its marker lines. */
  readonly regions?: Readonly<Record<string, string>>;
  /** Module-scope const, override or alias name -> its new value (a number gets a `u` where the type is u32). */
  readonly values?: Readonly<Record<string, string | number>>;
  /** Repetition passes, in order. */
  readonly repeats?: readonly Repeat[];
}

/** The region that only the file as written holds; every specialization drops it. */
export const AS_WRITTEN = 'as-written';

const REGION_START = /^\s*\/\/ @region ([a-z0-9][a-z0-9-]*)\s*$/;
const REGION_END = /^\s*\/\/ @end ([a-z0-9][a-z0-9-]*)\s*$/;
const REGION_LIKE = /^\s*\/\/\s*@(region|end)\b/;

interface Region {
  readonly name: string;
  /** Line indexes of the start and end markers. */
  readonly start: number;
  readonly end: number;
}

/** The regions of `lines`, nested ones included, in order of their start; throws on an unbalanced marker. */
function regionsOf(lines: readonly string[], where: string): Region[] {
  const open: { name: string; start: number }[] = [];
  const out: Region[] = [];
  lines.forEach((line, i) => {
    const s = REGION_START.exec(line);
    const e = REGION_END.exec(line);
    if (!s && !e && REGION_LIKE.test(line))
      throw new Error(`${where}: malformed region marker "${line.trim()}" (write "// @region name" / "// @end name")`);
    if (s) open.push({ name: s[1], start: i });
    if (e) {
      const top = open.pop();
      if (!top || top.name !== e[1])
        throw new Error(
          `${where}: "// @end ${e[1]}" on line ${i + 1} closes ${top ? `region ${top.name}` : 'nothing'}`,
        );
      out.push({ name: top.name, start: top.start, end: i });
    }
  });
  if (open.length > 0) throw new Error(`${where}: region ${open[open.length - 1].name} has no "// @end" line`);
  return out.sort((a, b) => a.start - b.start);
}

/** The names of the regions of `source`, nested ones included, in order. */
export function regionNames(source: string, where = 'shader'): string[] {
  return regionsOf(source.split('\n'), where).map((r) => r.name);
}

/**
 * `source` with the contents of the named regions replaced (outermost first; a region inside a replaced one goes
 * with it) and region `as-written` dropped with its markers. Throws on a named region the source lacks.
 */
export function replaceRegions(source: string, regions: Readonly<Record<string, string>>, where = 'shader'): string {
  return rewriteRegions(source, regions, true, where);
}

function rewriteRegions(
  source: string,
  regions: Readonly<Record<string, string>>,
  dropAsWritten: boolean,
  where: string,
): string {
  const lines = source.split('\n');
  const found = regionsOf(lines, where);
  for (const name of Object.keys(regions))
    if (!found.some((r) => r.name === name)) throw new Error(`${where}: no region "${name}" to replace`);
  const out: string[] = [];
  let i = 0;
  for (const r of found) {
    const drop = dropAsWritten && r.name === AS_WRITTEN;
    if (r.start < i || !(drop || Object.hasOwn(regions, r.name))) continue; // kept, or inside one replaced
    out.push(...lines.slice(i, r.start));
    if (!drop) {
      const text = regions[r.name].replace(/\n$/, '');
      out.push(lines[r.start], ...(text === '' ? [] : text.split('\n')), lines[r.end]);
    }
    i = r.end + 1;
  }
  out.push(...lines.slice(i));
  return out.join('\n');
}

/**
 * The text of block `name` with the regions it includes filled in, recursively: what a region `name` holds in a
 * shader's declared source (fillBlockRegions). Throws on an unknown block or an include cycle.
 */
export function blockText(
  name: string,
  blocks: Readonly<Record<string, string>>,
  chain: readonly string[] = [],
): string {
  const where = [...chain, name].join(' -> ');
  if (chain.includes(name)) throw new Error(`blockText: include cycle ${where}`);
  if (!Object.hasOwn(blocks, name))
    throw new Error(`blockText: ${where}: unknown block "${name}" (known: ${Object.keys(blocks).sort().join(', ')})`);
  return fillRegions(blocks[name].replace(/\n$/, ''), blocks, [...chain, name], where);
}

/**
 * `source` with every region named after a block holding that block's text (blockText) in place of what it held
 * (a shader's stand-ins; a region inside goes with it); other regions are left as they are, region `as-written`
 * included. Throws where a block would enter a shader twice (WGSL forbids a second definition).
 */
export function fillBlockRegions(source: string, blocks: Readonly<Record<string, string>>, where = 'shader'): string {
  const filled = fillRegions(source, blocks, [], where);
  const names = regionNames(filled, where).filter((n) => Object.hasOwn(blocks, n));
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new Error(`${where}: block "${twice}" is included twice; include it once, where it is first needed`);
  return filled;
}

function fillRegions(
  source: string,
  blocks: Readonly<Record<string, string>>,
  chain: readonly string[],
  where: string,
): string {
  const lines = source.split('\n');
  const contents: Record<string, string> = {};
  let i = 0;
  for (const r of regionsOf(lines, where)) {
    if (r.start < i || !Object.hasOwn(blocks, r.name)) continue;
    contents[r.name] = blockText(r.name, blocks, chain);
    i = r.end + 1;
  }
  return rewriteRegions(source, contents, false, where); // a file as written keeps region as-written
}

/**
 * `source` with the named module-scope declarations' values replaced: `const NAME[: T] = x;` and
 * `override NAME[: T] = x;` get the value as their initializer (a number written `Nu` where T is u32),
 * `alias NAME = T;` gets the value as its type. Throws where a name is not declared exactly once.
 */
export function replaceValues(
  source: string,
  values: Readonly<Record<string, string | number>>,
  where = 'shader',
): string {
  let out = source;
  for (const [name, value] of Object.entries(values)) {
    const decl = new RegExp(
      `^((?:const|override)\\s+${name}\\s*(:\\s*([A-Za-z0-9_<>]+))?\\s*=\\s*)[^;]+;|^(alias\\s+${name}\\s*=\\s*)[^;]+;`,
      'gm',
    );
    const hits = [...out.matchAll(decl)];
    if (hits.length !== 1)
      throw new Error(`${where}: ${name} is declared ${hits.length} times at module scope (const, override or alias)`);
    out = out.replace(decl, (_m, head?: string, _t?: string, type?: string, alias?: string) => {
      if (alias) return `${alias}${value};`;
      const text = typeof value === 'number' ? `${value}${type === 'u32' ? 'u' : ''}` : value;
      return `${head}${text};`;
    });
  }
  return out;
}

const TOKEN = /^_[a-z][a-z0-9]*$/;

/** `source` with one repetition pass applied. */
export function repeatLines(source: string, repeat: Repeat, where = 'shader'): string {
  const { marker, count, tokens, sum } = repeat;
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`${where}: @${marker} needs a whole count >= 1, got ${count}`);
  if (!/^[a-z][a-z0-9-]*$/.test(marker))
    throw new Error(`${where}: a marker is lower-case letters, digits and dashes, got "${marker}"`);
  const at = (text: string, i: number) => {
    let t = text;
    for (const [token, value] of Object.entries(tokens(i))) {
      if (!TOKEN.test(token)) throw new Error(`${where}: index token "${token}" is not of the form _name`);
      t = t.replace(new RegExp(`${token}(?![A-Za-z0-9])`, 'g'), String(value));
    }
    return t;
  };
  const ending = new RegExp(`\\s*\\/\\/ @${marker}((?: @[a-z][a-z0-9-]*)*)\\s*$`);
  const out = source
    .split('\n')
    .flatMap((line) => {
      if (line.trimStart().startsWith('//')) return [line];
      const body = sum ? expandSums(line, sum, count, at, where) : line;
      if (!ending.test(body)) return [body];
      // Markers after this one (`// @rows @unroll`) stay on each copy for their own pass.
      const bare = body.replace(ending, (_m: string, rest: string) => (rest ? ` //${rest}` : ''));
      return Array.from({ length: count }, (_, i) => at(bare, i));
    })
    .join('\n');
  const code = out.replace(/\/\/.*$/gm, '');
  if (new RegExp(`@${marker}\\b`).test(code) || (sum && new RegExp(`\\b${sum}\\(`).test(code)))
    throw new Error(`${where}: a @${marker} marker or ${sum ?? 'sum'} call was left unexpanded`);
  return out;
}

function expandSums(
  line: string,
  fn: string,
  n: number,
  at: (text: string, i: number) => string,
  where: string,
): string {
  const call = new RegExp(`\\b${fn}\\(`);
  let out = line;
  for (let m = call.exec(out); m; m = call.exec(out)) {
    const open = m.index + m[0].length;
    let depth = 1;
    let j = open;
    for (; j < out.length && depth > 0; j++) {
      if (out[j] === '(') depth++;
      else if (out[j] === ')') depth--;
    }
    if (depth !== 0) throw new Error(`${where}: unbalanced ${fn}( in "${line.trim()}"`);
    const expr = out.slice(open, j - 1);
    out = `${out.slice(0, m.index)}(${Array.from({ length: n }, (_, c) => at(expr, c)).join(' + ')})${out.slice(j)}`;
  }
  return out;
}

/** `source` specialized: regions, then values, then each repeat in order (see the file's opening comment). */
export function specialize(source: string, spec: Specialization, where = 'shader'): string {
  let out = replaceRegions(source, spec.regions ?? {}, where);
  if (spec.values) out = replaceValues(out, spec.values, where);
  for (const r of spec.repeats ?? []) out = repeatLines(out, r, where);
  return out;
}
