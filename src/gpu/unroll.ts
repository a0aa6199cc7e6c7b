// Expands the unrolling markers of a WGSL template for a fixed count n (shaders/attention-rows.wgsl): compilers
// such as SwiftShader's do not unroll loops or keep dynamically indexed private arrays in registers, so loops
// over a small fixed dimension are written out. Two markers, both with $c as the index (comment lines are left
// as they are):
//   a line ending in `// @unroll` is repeated n times with $c = 0 .. n - 1 (the marker removed);
//   @sum(expr) becomes (expr[$c=0] + ... + expr[$c=n-1]); expr may hold balanced parentheses.

const UNROLL = /\s*\/\/ @unroll\s*$/;

/** The template with every marker expanded for n >= 1. */
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
