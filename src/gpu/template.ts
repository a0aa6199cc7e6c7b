// Expands the template markers of WGSL sources, text in, text out (it reads no files: shaders arrive through `?raw`
// imports, Vite's in the browser and src/cli/raw-loader.mjs in Node, so callers pass the block texts; the row
// kernels' registry is src/kernels/wgsl-blocks.ts). Comment lines are never expanded, except an include line:
//   a line `// @include name` is replaced by the text of block `name` (shaders/blocks/name.wgsl), whose own
//     includes are expanded in turn; each block enters a shader at most once (WGSL forbids a second definition);
//   a line ending in `// @unroll` is repeated n times with $c = 0 .. n - 1 (the marker removed);
//   @sum(expr) becomes (expr[$c=0] + ... + expr[$c=n-1]); expr may hold balanced parentheses.
// The unrolling markers exist because compilers such as SwiftShader's do not unroll loops or keep dynamically
// indexed private arrays in registers, so loops over a small fixed dimension are written out
// (shaders/attention-rows.wgsl, matmul.wgsl's matmul_wide).

const UNROLL = /\s*\/\/ @unroll\s*$/;
const INCLUDE = /^\s*\/\/ @include ([a-z0-9][a-z0-9-]*)\s*$/;
const INCLUDE_LIKE = /^\s*\/\/\s*@include\b/;

/**
 * The shader with every `// @include name` line replaced by blocks[name], recursively. Throws, naming the shader
 * (`shaderName`) and the chain of blocks, on an unknown block, an include cycle, a block included twice (directly
 * or through other blocks) and a malformed include line.
 */
export function expandIncludes(source: string, blocks: Readonly<Record<string, string>>, shaderName = 'shader'): string {
  const included = new Set<string>();
  const expand = (text: string, chain: readonly string[]): string =>
    text
      .split('\n')
      .map((line) => {
        const m = INCLUDE.exec(line);
        if (!m && !INCLUDE_LIKE.test(line)) return line;
        const where = [shaderName, ...chain].join(' -> ');
        if (!m) throw new Error(`expandIncludes: ${where}: malformed include "${line.trim()}" (write "// @include block-name")`);
        const name = m[1];
        if (chain.includes(name)) throw new Error(`expandIncludes: include cycle ${where} -> ${name}`);
        if (!Object.hasOwn(blocks, name)) {
          throw new Error(`expandIncludes: ${where}: unknown block "${name}" (known: ${Object.keys(blocks).sort().join(', ') || 'none'})`);
        }
        if (included.has(name)) {
          throw new Error(`expandIncludes: ${where}: block "${name}" is already included in ${shaderName}; include it once, where it is first needed`);
        }
        included.add(name);
        return expand(blocks[name].replace(/\n$/, ''), [...chain, name]);
      })
      .join('\n');
  return expand(source, []);
}

/** The template with every unrolling marker expanded for n >= 1. */
export function expandUnrolled(source: string, n: number): string {
  if (!Number.isInteger(n) || n < 1) throw new Error(`expandUnrolled: n must be a whole number >= 1, got ${n}`);
  const at = (text: string, c: number) => text.replaceAll('$c', String(c));
  const lines = source.split('\n').flatMap((line) => {
    if (line.trimStart().startsWith('//')) return [line]; // comments may name the markers
    const body = expandSums(line, n, at);
    if (!UNROLL.test(body)) return [body];
    const bare = body.replace(UNROLL, '');
    return Array.from({ length: n }, (_, c) => at(bare, c));
  });
  const out = lines.join('\n');
  if (/@sum\(|@unroll/.test(out.replace(/\/\/.*$/gm, ''))) throw new Error('expandUnrolled: a marker was left unexpanded');
  return out;
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
