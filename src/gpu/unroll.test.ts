// The WGSL unrolling template markers: repeated lines, sums with nested parentheses, and the errors.
import { describe, expect, it } from 'vitest';
import { expandUnrolled } from './unroll';

describe('expandUnrolled', () => {
  it('repeats a marked line n times with $c replaced', () => {
    expect(expandUnrolled('a\n  x$c = y[i + $c]; // @unroll\nb', 3)).toBe('a\n  x0 = y[i + 0];\n  x1 = y[i + 1];\n  x2 = y[i + 2];\nb');
  });
  it('expands @sum with nested parentheses, also inside a repeated line', () => {
    expect(expandUnrolled('let s = @sum(dot(q$c, k[(o + $c)]));', 2)).toBe('let s = (dot(q0, k[(o + 0)]) + dot(q1, k[(o + 1)]));');
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
