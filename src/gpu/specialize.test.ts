// The WGSL specializer (src/gpu/specialize.ts): regions (block regions filled, nested and their errors; region
// as-written dropped), module-scope values, repeated lines with index tokens and sums, passes over two dimensions.
import { describe, expect, it } from 'vitest';
import { blockText, fillBlockRegions, regionNames, replaceValues, repeatLines, specialize } from './specialize';

describe('regions', () => {
  const blocks = {
    base: 'const A: u32 = 1u;\n',
    lanes: '// lanes need base\n// @region base\n// @end base\nfn lanes() -> u32 { return A; }',
    stats: '// @region lanes\n// @end lanes\nfn stats() -> u32 { return lanes(); }\n',
  };

  it("fills a block's region with its text in place of its stand-ins, the regions it includes filled in turn", () => {
    const filled = fillBlockRegions('// @region stats\n// @end stats\nfn main() {}', blocks);
    expect(filled).toBe(
      '// @region stats\n// @region lanes\n// lanes need base\n// @region base\nconst A: u32 = 1u;\n// @end base\nfn lanes() -> u32 { return A; }\n// @end lanes\nfn stats() -> u32 { return lanes(); }\n// @end stats\nfn main() {}',
    );
    expect(fillBlockRegions(filled, blocks)).toBe(filled);
    // A shader's stand-ins give way to the block's text.
    expect(fillBlockRegions('// @region stats\nfn stats() -> u32 { return 0u; }\n// @end stats', blocks)).toBe(
      fillBlockRegions('// @region stats\n// @end stats', blocks),
    );
    expect(regionNames(filled)).toEqual(['stats', 'lanes', 'base']);
  });
  it('replaces a nested region and drops region as-written with its markers', () => {
    const filled = fillBlockRegions(
      '// @region stats\n// @end stats\n// @region as-written\nconst _t = 0u;\n// @end as-written\nx',
      blocks,
    );
    expect(specialize(filled, { regions: { lanes: 'fn lanes() -> u32 { return 2u; }' } })).toBe(
      '// @region stats\n// @region lanes\nfn lanes() -> u32 { return 2u; }\n// @end lanes\nfn stats() -> u32 { return lanes(); }\n// @end stats\nx',
    );
  });
  it('rejects an unknown block, a cycle, a block entering twice, unbalanced and malformed markers', () => {
    expect(() => blockText('nope', blocks)).toThrow('unknown block "nope" (known: base, lanes, stats)');
    expect(() => blockText('x', { x: '// @region y\n// @end y', y: '// @region x\n// @end x' })).toThrow(
      'include cycle x -> y -> x',
    );
    expect(() =>
      fillBlockRegions('// @region base\n// @end base\n// @region lanes\n// @end lanes', blocks, 'a.wgsl'),
    ).toThrow('a.wgsl: block "base" is included twice');
    expect(() => regionNames('// @region a\n// @end b', 'a.wgsl')).toThrow(
      'a.wgsl: "// @end b" on line 2 closes region a',
    );
    expect(() => regionNames('// @region a', 'a.wgsl')).toThrow('region a has no "// @end" line');
    expect(() => regionNames('//@region a', 'a.wgsl')).toThrow(/malformed region marker/);
    expect(() => specialize('x', { regions: { gone: '' } }, 'a.wgsl')).toThrow('a.wgsl: no region "gone" to replace');
  });
  it('does not take a block name from the object prototype', () => {
    expect(() => blockText('constructor', blocks)).toThrow(/unknown block "constructor"/);
  });
});

describe('replaceValues', () => {
  it('replaces a const or override initializer (u32 numbers get their u) and an alias type', () => {
    const text = 'const HD4: u32 = 1u; // head dim / 4\noverride S: f32 = 1.0;\nalias V = f32;\nconst HD4X: u32 = 1u;';
    expect(replaceValues(text, { HD4: 8, S: 0.5, V: 'vec4<f32>' })).toBe(
      'const HD4: u32 = 8u; // head dim / 4\noverride S: f32 = 0.5;\nalias V = vec4<f32>;\nconst HD4X: u32 = 1u;',
    );
  });
  it('rejects a name declared nowhere or twice, or only inside a function', () => {
    expect(() => replaceValues('const A = 1;', { B: 2 }, 'a.wgsl')).toThrow('a.wgsl: B is declared 0 times');
    expect(() => replaceValues('const A = 1;\nconst A = 2;', { A: 3 })).toThrow(/A is declared 2 times/);
    expect(() => replaceValues('fn f() {\n  const A = 1;\n}', { A: 3 })).toThrow(/A is declared 0 times/);
  });
});

describe('repeatLines', () => {
  const rows = { marker: 'rows', count: 6, tokens: (r: number) => ({ _rq: r >> 2, _rl: r & 3, _r: r }) };
  it('repeats a marked line, replacing tokens only where no letter or digit follows', () => {
    expect(repeatLines('a\nacc_r += x_rq[_rl] * store_rate; // @rows\nb', rows)).toBe(
      'a\nacc0 += x0[0] * store_rate;\nacc1 += x0[1] * store_rate;\nacc2 += x0[2] * store_rate;\nacc3 += x0[3] * store_rate;\nacc4 += x1[0] * store_rate;\nacc5 += x1[1] * store_rate;\nb',
    );
  });
  it('expands a sum with nested parentheses on every line, before repeating', () => {
    const unroll = { marker: 'unroll', count: 2, tokens: (c: number) => ({ _c: c }), sum: 'sum_c' };
    expect(repeatLines('let s = sum_c(dot(q_c, k[(o + _c)]));', unroll)).toBe(
      'let s = (dot(q0, k[(o + 0)]) + dot(q1, k[(o + 1)]));',
    );
    expect(repeatLines('let s = sum_c(a_c) * sum_c(b_c);', { ...unroll, count: 1 })).toBe('let s = (a0) * (b0);');
    expect(() => repeatLines('let s = sum_c(a_c;', unroll)).toThrow(/unbalanced sum_c\(/);
  });
  it('leaves comment lines that name the marker or tokens alone', () => {
    const text = '// a line ending in `// @rows` is repeated with _r replaced\nlet x = 1;';
    expect(repeatLines(text, rows)).toBe(text);
  });
  it('rejects a bad count, a bad marker or token name and a marker left mid-line', () => {
    expect(() => repeatLines('x', { ...rows, count: 0 })).toThrow(/whole count >= 1/);
    expect(() => repeatLines('x', { ...rows, marker: 'Rows!' })).toThrow(/lower-case letters/);
    expect(() => repeatLines('y = $r; // @rows', { ...rows, tokens: () => ({ $r: 1 }) })).toThrow(
      /not of the form _name/,
    );
    expect(() => repeatLines('let a = 1; @rows let b = 2;', rows)).toThrow(/@rows marker or sum call was left/);
  });
  it('repeats over two dimensions, the first marker outermost, sums expanded in the second pass', () => {
    const text = 'let s_t = sum_c(q_t__c * k_c); // @rows\nvar a_t__c = 0.0; // @rows @unroll';
    const spec = {
      repeats: [
        { marker: 'rows', count: 2, tokens: (t: number) => ({ _t: t }) },
        { marker: 'unroll', count: 2, tokens: (c: number) => ({ _c: c }), sum: 'sum_c' },
      ],
    };
    expect(specialize(text, spec)).toBe(
      'let s0 = (q0_0 * k0 + q0_1 * k1);\nlet s1 = (q1_0 * k0 + q1_1 * k1);\nvar a0_0 = 0.0;\nvar a0_1 = 0.0;\nvar a1_0 = 0.0;\nvar a1_1 = 0.0;',
    );
  });
});
