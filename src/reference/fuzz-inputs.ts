// Inputs the fuzz suites share (src/**/fuzz.test.ts): a seeded pick, the names every object inherits, and
// values that are wrong for a field of each kind, as JSON values and as text (link parameters, CLI flags). Each
// bad value is wrong by construction for its kind, so a suite can insist that it is refused by name. Test input
// only; nothing in the product imports it.

import type { FieldSpec } from '../schema/fields';
import type { Rng } from '../core/random';

/** One of `xs`, drawn from `rng`. */
export function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)];
}

/** Names every object has through its prototype: they must never be taken for fields, flags or tensors. */
export const INHERITED_NAMES = [
  'constructor',
  'toString',
  '__proto__',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  'toLocaleString',
  '__defineGetter__',
] as const;

/** Names that are no field: inherited ones, long, empty-looking, foreign scripts, markup. */
export function unknownNames(rng: Rng): string[] {
  return [
    ...INHERITED_NAMES,
    'x'.repeat(100_000),
    'y'.repeat(1_000),
    `field_${rng.int(1e6)}`,
    'ünïcödé',
    '名前',
    '<script>alert(1)</script>',
    'a b',
    '--',
  ];
}

/** JSON values that break a field's rule, whatever its range: wrong types, and for numbers, values outside it. */
export function badJsonValues(spec: FieldSpec): unknown[] {
  const long = 'z'.repeat(10_000);
  switch (spec.kind) {
    case 'number': {
      const out: unknown[] = ['x', true, [], {}, long, '1'];
      if (!spec.nullable) out.push(null);
      if (Number.isFinite(spec.max)) out.push(spec.max + Math.max(1, Math.abs(spec.max)));
      if (Number.isFinite(spec.min)) out.push(spec.min - Math.max(1, Math.abs(spec.min)));
      if (spec.minExclusive) out.push(spec.min);
      if (spec.maxExclusive) out.push(spec.max);
      if (spec.integer) out.push(spec.min + 0.5);
      return out;
    }
    case 'enum':
      return ['not_a_value', long, 5, null, [], { x: 1 }, spec.values[0].toUpperCase() + '!'];
    case 'boolean':
      return ['true', 1, 0, null, [], long];
    case 'string':
      return ['', '   ', 5, [], {}, false];
    case 'weights':
      return [
        [],
        {},
        5,
        'accuracy:1',
        { acuracy: 1 },
        { accuracy: 'x' },
        { accuracy: 0, format: 0 },
        { accuracy: 1e9 },
        JSON.parse('{"__proto__":1}'),
        { constructor: 1 },
        { [long]: 1 },
      ];
    case 'names':
      return [
        [],
        {},
        5,
        'math=checkpoints/copy',
        { math: '' },
        { math: 5 },
        { math: 'a\nb' },
        { 'a b': 'checkpoints/copy' },
        { '-x': 'checkpoints/copy' },
        JSON.parse('{"__proto__":"x"}'),
        { [long]: 'checkpoints/copy' },
      ];
  }
}

/** Text that no field of this kind decodes to a valid value (link parameters, CLI flags). */
export function badTextValues(spec: FieldSpec): string[] {
  const long = 'z'.repeat(10_000);
  switch (spec.kind) {
    case 'number': {
      const out = ['abc', '1e999', 'NaN', '--1', long, '1,5', '9'.repeat(10_000)];
      if (!spec.nullable) out.push('', 'null');
      if (Number.isFinite(spec.max)) out.push(String(spec.max + Math.max(1, Math.abs(spec.max))));
      if (spec.integer) out.push(String(spec.min + 0.5));
      return out;
    }
    case 'enum':
      return ['not_a_value', long, '5', '', `${spec.values[0]}!`];
    case 'boolean':
      return ['maybe', '2', 'yes', long, 'TRUEISH'];
    case 'string':
      return []; // any text is a string, and empty text is null
    case 'weights':
      return [
        'acuracy:1',
        'accuracy',
        'accuracy:0,format:0',
        '{bad json',
        '__proto__:1',
        'constructor:1',
        'accuracy:1e999',
        `${long}:1`,
        '[1,2]',
      ];
    case 'names':
      return ['math', 'math=', '=checkpoints/copy', '{bad json', '__proto__=x', 'a b=x', `${long}=x`, '[1,2]'];
  }
}
