// The WGSL template markers: shared blocks by `// @include` (nesting and its errors), repeated lines, sums with
// nested parentheses, and the unrolling errors.
import { describe, expect, it } from 'vitest';
import { expandIncludes, expandRepeated, expandUnrolled } from './template';

describe('expandIncludes', () => {
  const blocks = {
    base: 'const A: u32 = 1u;\n',
    lanes: '// lanes need base\n// @include base\nfn lanes() -> u32 { return A; }',
    stats: '// @include lanes\nfn stats() -> u32 { return lanes(); }\n',
  };

  it("replaces an include line by the block, without the block file's final newline", () => {
    expect(expandIncludes('struct P { n: u32 }\n// @include base\nfn main() {}', blocks)).toBe(
      'struct P { n: u32 }\nconst A: u32 = 1u;\nfn main() {}',
    );
  });
  it('expands the includes of included blocks, each once, in place', () => {
    expect(expandIncludes('  // @include stats  \nfn main() {}', blocks)).toBe(
      '// lanes need base\nconst A: u32 = 1u;\nfn lanes() -> u32 { return A; }\nfn stats() -> u32 { return lanes(); }\nfn main() {}',
    );
  });
  it('leaves a shader without includes, and comments that name the marker mid-line, alone', () => {
    const text = '// block row-stats (`// @include row-stats`) is pasted here\nlet x = 1;';
    expect(expandIncludes(text, blocks)).toBe(text);
  });
  it('rejects an unknown block, naming the shader, the chain and the known blocks', () => {
    expect(() => expandIncludes('// @include nope', blocks, 'a.wgsl')).toThrow(
      'a.wgsl: unknown block "nope" (known: base, lanes, stats)',
    );
    expect(() => expandIncludes('// @include lanes', { lanes: '// @include gone' }, 'a.wgsl')).toThrow(
      'a.wgsl -> lanes: unknown block "gone"',
    );
  });
  it('rejects an include cycle, direct or through other blocks', () => {
    expect(() => expandIncludes('// @include self', { self: '// @include self' }, 'a.wgsl')).toThrow(
      'include cycle a.wgsl -> self -> self',
    );
    const cycle = { x: '// @include y', y: '// @include z', z: '// @include x' };
    expect(() => expandIncludes('// @include x', cycle, 'a.wgsl')).toThrow('include cycle a.wgsl -> x -> y -> z -> x');
  });
  it('rejects a block included twice into one shader, directly or through another block', () => {
    expect(() => expandIncludes('// @include base\n// @include base', blocks, 'a.wgsl')).toThrow(
      'a.wgsl: block "base" is already included in a.wgsl',
    );
    expect(() => expandIncludes('// @include base\n// @include lanes', blocks, 'a.wgsl')).toThrow(
      'a.wgsl -> lanes: block "base" is already included',
    );
    expect(() => expandIncludes('// @include stats\n// @include lanes', blocks, 'a.wgsl')).toThrow(
      'a.wgsl: block "lanes" is already included',
    );
  });
  it('rejects a malformed include line instead of leaving it as a comment', () => {
    expect(() => expandIncludes('// @include', blocks, 'a.wgsl')).toThrow('a.wgsl: malformed include "// @include"');
    expect(() => expandIncludes('// @include base lanes', blocks)).toThrow(/malformed include/);
    expect(() => expandIncludes('//@include base', blocks)).toThrow(/malformed include/);
  });
  it('does not take a block name from the object prototype', () => {
    expect(() => expandIncludes('// @include constructor', blocks)).toThrow(/unknown block "constructor"/);
  });
});

describe('expandUnrolled', () => {
  it('repeats a marked line n times with $c replaced', () => {
    expect(expandUnrolled('a\n  x$c = y[i + $c]; // @unroll\nb', 3)).toBe(
      'a\n  x0 = y[i + 0];\n  x1 = y[i + 1];\n  x2 = y[i + 2];\nb',
    );
  });
  it('expands @sum with nested parentheses, also inside a repeated line', () => {
    expect(expandUnrolled('let s = @sum(dot(q$c, k[(o + $c)]));', 2)).toBe(
      'let s = (dot(q0, k[(o + 0)]) + dot(q1, k[(o + 1)]));',
    );
    expect(expandUnrolled('let s = @sum(a$c) * @sum(b$c);', 1)).toBe('let s = (a0) * (b0);');
  });
  it('leaves lines without markers alone, including comments that name them', () => {
    const text = '// a line ending in `// @unroll` is repeated; @sum(x$c) too\nlet x = 1;';
    expect(expandUnrolled(text, 4)).toBe(text);
  });
  it('rejects a bad count and an unbalanced sum', () => {
    expect(() => expandUnrolled('x', 0)).toThrow(/n must be/);
    expect(() => expandUnrolled('let s = @sum(a$c;', 2)).toThrow(/unbalanced/);
  });
});

describe('expandRepeated', () => {
  const rows = (r: number) => ({ $rq: String(r >> 2), $rl: String(r & 3), $r: String(r) });
  it('repeats the marked lines, replacing longer tokens before their prefixes', () => {
    expect(expandRepeated('a\nacc$r += x$rq[$rl]; // @rows\nb', 'rows', 6, rows)).toBe(
      'a\nacc0 += x0[0];\nacc1 += x0[1];\nacc2 += x0[2];\nacc3 += x0[3];\nacc4 += x1[0];\nacc5 += x1[1];\nb',
    );
  });
  it('composes with other markers: each pass expands only its own', () => {
    const text = 'let y$c = b$c; // @unroll\nlet x$q = a$q; // @quads';
    const quads = expandRepeated(text, 'quads', 2, (q) => ({ $q: String(q) }));
    expect(quads).toBe('let y$c = b$c; // @unroll\nlet x0 = a0;\nlet x1 = a1;');
    expect(expandUnrolled(quads, 2)).toBe('let y0 = b0;\nlet y1 = b1;\nlet x0 = a0;\nlet x1 = a1;');
  });
  it('leaves comment lines that name the marker alone', () => {
    const text = '// a line ending in `// @rows` is repeated\nlet x = 1;';
    expect(expandRepeated(text, 'rows', 3, rows)).toBe(text);
  });
  it('rejects a bad count, a bad marker name and a marker left mid-line', () => {
    expect(() => expandRepeated('x', 'rows', 0, rows)).toThrow(/n must be/);
    expect(() => expandRepeated('x', 'Rows!', 2, rows)).toThrow(/marker must be/);
    expect(() => expandRepeated('let a = 1; @rows let b = 2;', 'rows', 2, rows)).toThrow(
      /@rows marker was left unexpanded/,
    );
  });
});

describe('expandRepeated then expandUnrolled on a line marked for both', () => {
  it('repeats over both dimensions, the first marker outermost, sums expanded in the second pass', () => {
    const text = 'let s$t = @sum(q$t_$c * k$c); // @rows\nvar a$t_$c = 0.0; // @rows @unroll';
    const byRow = expandRepeated(text, 'rows', 2, (t) => ({ $t: String(t) }));
    expect(byRow).toBe(
      'let s0 = @sum(q0_$c * k$c);\nlet s1 = @sum(q1_$c * k$c);\nvar a0_$c = 0.0; // @unroll\nvar a1_$c = 0.0; // @unroll',
    );
    expect(expandUnrolled(byRow, 2)).toBe(
      'let s0 = (q0_0 * k0 + q0_1 * k1);\nlet s1 = (q1_0 * k0 + q1_1 * k1);\nvar a0_0 = 0.0;\nvar a0_1 = 0.0;\nvar a1_0 = 0.0;\nvar a1_1 = 0.0;',
    );
  });
});
