// Expands the template markers of WGSL sources, text in, text out (it reads no files: shaders arrive through `?raw`
// imports, Vite's in the browser and src/cli/raw-loader.mjs in Node, so callers pass the block texts; the row
// kernels' registry is src/kernels/wgsl-blocks.ts). Comment lines are never expanded, except an include line:
//   a line `// @include name` is replaced by the text of block `name` (shaders/blocks/name.wgsl), whose own
//     includes are expanded in turn; each block enters a shader at most once (WGSL forbids a second definition);
//   a line ending in `// @unroll` is repeated n times with $c = 0 .. n - 1 (the marker removed);
//   @sum(expr) becomes (expr[$c=0] + ... + expr[$c=n-1]); expr may hold balanced parentheses;
//   a line ending in `// @<marker>` is repeated n times with named tokens replaced per copy (expandRepeated: a
//     kernel tiled in two dimensions, such as matmul.wgsl's matmul_wide over rows and columns, uses one marker each).
// The unrolling markers exist because compilers such as SwiftShader's do not unroll loops or keep dynamically
// indexed private arrays in registers, so loops over a small fixed dimension are written out
// (shaders/attention-rows.wgsl, matmul.wgsl's matmul_wide). LLVM-based drivers (lavapipe) pay for written-out code
// in compile time instead; shaders/attention-rows-looped.wgsl is the same kernel with the loops kept.

const UNROLL = /\s*\/\/ @unroll\s*$/;
const INCLUDE = /^\s*\/\/ @include ([a-z0-9][a-z0-9-]*)\s*$/;
const INCLUDE_LIKE = /^\s*\/\/\s*@include\b/;

/**
 * The shader with every `// @include name` line replaced by blocks[name], recursively. Throws, naming the shader
 * (`shaderName`) and the chain of blocks, on an unknown block, an include cycle, a block included twice (directly
 * or through other blocks) and a malformed include line.
 */
export function expandIncludes(
  source: string,
  blocks: Readonly<Record<string, string>>,
  shaderName = 'shader',
): string {
  const included = new Set<string>();
  const expand = (text: string, chain: readonly string[]): string =>
    text
      .split('\n')
      .map((line) => {
        const m = INCLUDE.exec(line);
        if (!m && !INCLUDE_LIKE.test(line)) return line;
        const where = [shaderName, ...chain].join(' -> ');
        if (!m)
          throw new Error(
            `expandIncludes: ${where}: malformed include "${line.trim()}" (write "// @include block-name")`,
          );
        const name = m[1];
        if (chain.includes(name)) throw new Error(`expandIncludes: include cycle ${where} -> ${name}`);
        if (!Object.hasOwn(blocks, name)) {
          throw new Error(
            `expandIncludes: ${where}: unknown block "${name}" (known: ${Object.keys(blocks).sort().join(', ') || 'none'})`,
          );
        }
        if (included.has(name)) {
          throw new Error(
            `expandIncludes: ${where}: block "${name}" is already included in ${shaderName}; include it once, where it is first needed`,
          );
        }
        included.add(name);
        return expand(blocks[name].replace(/\n$/, ''), [...chain, name]);
      })
      .join('\n');
  return expand(source, []);
}

/** The template with every unrolling marker expanded for n >= 1. */
export function expandUnrolled(source: string, n: number): string {
  checkCount('expandUnrolled', n);
  const at = (text: string, c: number) => text.replaceAll('$c', String(c));
  const out = repeatMarked(source, UNROLL, n, at, (line) => expandSums(line, n, at));
  if (/@sum\(|@unroll/.test(out.replace(/\/\/.*$/gm, '')))
    throw new Error('expandUnrolled: a marker was left unexpanded');
  return out;
}

/**
 * Every line ending in `// @<marker>` repeated n times (n >= 1), copy i with each token of tokens(i) replaced by its
 * value; tokens are replaced longest first, so `$rq` and `$r` may both be used. Other lines pass unchanged. A line
 * ending in `// @<marker> @<other> ...` is repeated too and its copies keep `// @<other> ...` for a later pass (a
 * line repeated over two dimensions; expand the first marker first).
 */
export function expandRepeated(
  source: string,
  marker: string,
  n: number,
  tokens: (i: number) => Record<string, string>,
): string {
  checkCount('expandRepeated', n);
  if (!/^[a-z][a-z0-9-]*$/.test(marker))
    throw new Error(`expandRepeated: marker must be lower-case letters, digits and dashes, got "${marker}"`);
  const at = (text: string, i: number) =>
    Object.entries(tokens(i))
      .sort(([a], [b]) => b.length - a.length)
      .reduce((t, [token, value]) => t.replaceAll(token, value), text);
  const out = repeatMarked(
    source,
    new RegExp(`\\s*\\/\\/ @${marker}((?: @[a-z][a-z0-9-]*)*)\\s*$`),
    n,
    at,
    (line) => line,
  );
  if (new RegExp(`@${marker}\\b`).test(out.replace(/\/\/.*$/gm, '')))
    throw new Error(`expandRepeated: a @${marker} marker was left unexpanded`);
  return out;
}

function checkCount(fn: string, n: number): void {
  if (!Number.isInteger(n) || n < 1) throw new Error(`${fn}: n must be a whole number >= 1, got ${n}`);
}

/** Lines matching `marker` (after `prepare`) repeated n times through `at`; comment lines untouched. */
function repeatMarked(
  source: string,
  marker: RegExp,
  n: number,
  at: (text: string, i: number) => string,
  prepare: (line: string) => string,
): string {
  return source
    .split('\n')
    .flatMap((line) => {
      if (line.trimStart().startsWith('//')) return [line]; // comments may name the markers
      const body = prepare(line);
      if (!marker.test(body)) return [body];
      // Markers after this one (`// @rows @unroll`) stay on each copy for their own pass.
      const bare = body.replace(marker, (_m: string, rest: unknown) =>
        typeof rest === 'string' && rest ? ` //${rest}` : '',
      );
      return Array.from({ length: n }, (_, i) => at(bare, i));
    })
    .join('\n');
}

function expandSums(line: string, n: number, at: (text: string, c: number) => string): string {
  let out = line;
  for (let i = out.indexOf('@sum('); i >= 0; i = out.indexOf('@sum(')) {
    const open = i + '@sum('.length;
    let depth = 1;
    let j = open;
    for (; j < out.length && depth > 0; j++) {
      if (out[j] === '(') depth++;
      else if (out[j] === ')') depth--;
    }
    if (depth !== 0) throw new Error(`expandUnrolled: unbalanced @sum( in "${line.trim()}"`);
    const expr = out.slice(open, j - 1);
    out = `${out.slice(0, i)}(${Array.from({ length: n }, (_, c) => at(expr, c)).join(' + ')})${out.slice(j)}`;
  }
  return out;
}
