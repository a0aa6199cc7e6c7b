// Exact rational arithmetic and a small recursive-descent parser for Countdown expressions: natural numbers,
// + - * /, parentheses, spaces. Never uses eval or Function, and never throws on any input string.
// Not a calculator: no unary minus, no decimals, no exponents; division is exact (rationals), never floating.

/** An exact rational number num/den in lowest terms with den > 0. */
export class Rational {
  readonly num: bigint;
  readonly den: bigint;

  private constructor(num: bigint, den: bigint) {
    this.num = num;
    this.den = den;
  }

  /** num/den reduced. Throws RangeError on a zero denominator (callers use `div` for untrusted input). */
  static of(num: bigint | number, den: bigint | number = 1n): Rational {
    let n = BigInt(num);
    let d = BigInt(den);
    if (d === 0n) throw new RangeError('Rational with zero denominator');
    if (d < 0n) {
      n = -n;
      d = -d;
    }
    const g = gcd(n < 0n ? -n : n, d);
    return new Rational(n / g, d / g);
  }

  add(o: Rational): Rational {
    return Rational.of(this.num * o.den + o.num * this.den, this.den * o.den);
  }
  sub(o: Rational): Rational {
    return Rational.of(this.num * o.den - o.num * this.den, this.den * o.den);
  }
  mul(o: Rational): Rational {
    return Rational.of(this.num * o.num, this.den * o.den);
  }
  /** this / o, or null when o is zero. */
  div(o: Rational): Rational | null {
    return o.num === 0n ? null : Rational.of(this.num * o.den, this.den * o.num);
  }
  isZero(): boolean {
    return this.num === 0n;
  }
  isInteger(): boolean {
    return this.den === 1n;
  }
  equals(o: Rational): boolean {
    return this.num === o.num && this.den === o.den;
  }
  /** "7" or "7/2" or "-1/3". */
  toString(): string {
    return this.den === 1n ? this.num.toString() : `${this.num}/${this.den}`;
  }
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

/** A binary operator of the grammar. */
export type Op = '+' | '-' | '*' | '/';

/** Parse tree. `at` is the 0-based column of the number or operator, for error messages. */
export type Expr =
  | { readonly kind: 'number'; readonly value: bigint; readonly at: number }
  | { readonly kind: 'binary'; readonly op: Op; readonly left: Expr; readonly right: Expr; readonly at: number };

/** Result of `parseExpression`: the tree and the number literals in reading order, or an error. */
export type ParseResult =
  | { readonly ok: true; readonly expr: Expr; readonly numbers: readonly bigint[] }
  | { readonly ok: false; readonly error: string; readonly at: number };

/** Result of `evaluateExpression`. */
export type EvalResult =
  | { readonly ok: true; readonly value: Rational }
  | { readonly ok: false; readonly error: string };

/** Inputs longer than this are rejected before lexing (bounds recursion depth and BigInt sizes). */
export const MAX_EXPRESSION_LENGTH = 256;
/** Deepest parenthesis nesting accepted. */
export const MAX_EXPRESSION_DEPTH = 32;

type Token =
  | { kind: 'num'; value: bigint; at: number }
  | { kind: 'op'; op: Op; at: number }
  | { kind: '('; at: number }
  | { kind: ')'; at: number };

class ParseFailure {
  readonly error: string;
  readonly at: number;
  constructor(error: string, at: number) {
    this.error = error;
    this.at = at;
  }
}

function lex(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] ?? '';
    if (c === ' ') {
      i++;
    } else if (c >= '0' && c <= '9') {
      let j = i;
      while (j < src.length && (src[j] ?? '') >= '0' && (src[j] ?? '') <= '9') j++;
      const text = src.slice(i, j);
      if (text.length > 1 && text[0] === '0') throw new ParseFailure(`number ${text} has a leading zero`, i);
      if (src[j] === '.') throw new ParseFailure('decimals are not allowed', j);
      tokens.push({ kind: 'num', value: BigInt(text), at: i });
      i = j;
    } else if (c === '+' || c === '-' || c === '*' || c === '/') {
      tokens.push({ kind: 'op', op: c, at: i });
      i++;
    } else if (c === '(' || c === ')') {
      tokens.push(c === '(' ? { kind: '(', at: i } : { kind: ')', at: i });
      i++;
    } else {
      throw new ParseFailure(`unexpected character ${JSON.stringify(c)}`, i);
    }
  }
  return tokens;
}

/**
 * Parses `expr := term (('+'|'-') term)*`, `term := factor (('*'|'/') factor)*`,
 * `factor := natural | '(' expr ')'`; operators are left-associative, spaces are ignored.
 * Never throws: any malformed input (empty, unbalanced parentheses, unary minus, stray characters, leading
 * zeros, decimals, too long, too deeply nested) returns `{ ok: false, error, at }`.
 */
export function parseExpression(src: string): ParseResult {
  try {
    if (typeof src !== 'string') return { ok: false, error: 'not a string', at: 0 };
    if (src.length > MAX_EXPRESSION_LENGTH) {
      return { ok: false, error: `longer than ${MAX_EXPRESSION_LENGTH} characters`, at: MAX_EXPRESSION_LENGTH };
    }
    const tokens = lex(src);
    const numbers: bigint[] = [];
    let pos = 0;
    let depth = 0;
    const peek = (): Token | undefined => tokens[pos];
    const where = (): number => peek()?.at ?? src.length;

    const factor = (): Expr => {
      const t = peek();
      if (t === undefined) throw new ParseFailure('expected a number or "(" but the expression ended', src.length);
      if (t.kind === 'num') {
        pos++;
        numbers.push(t.value);
        return { kind: 'number', value: t.value, at: t.at };
      }
      if (t.kind === '(') {
        if (++depth > MAX_EXPRESSION_DEPTH) throw new ParseFailure('parentheses nested too deeply', t.at);
        pos++;
        const inner = expr();
        const close = peek();
        if (close?.kind !== ')') throw new ParseFailure(`missing ")" for "(" at column ${t.at + 1}`, where());
        pos++;
        depth--;
        return inner;
      }
      if (t.kind === 'op' && t.op === '-') throw new ParseFailure('unary minus is not allowed', t.at);
      throw new ParseFailure(`expected a number or "(", got ${JSON.stringify(t.kind === 'op' ? t.op : t.kind)}`, t.at);
    };

    const binary = (next: () => Expr, ops: readonly Op[]): Expr => {
      let left = next();
      for (;;) {
        const t = peek();
        if (t?.kind !== 'op' || !ops.includes(t.op)) return left;
        pos++;
        const right = next();
        left = { kind: 'binary', op: t.op, left, right, at: t.at };
      }
    };
    const term = (): Expr => binary(factor, ['*', '/']);
    const expr = (): Expr => binary(term, ['+', '-']);

    if (tokens.length === 0) return { ok: false, error: 'empty expression', at: 0 };
    const tree = expr();
    const rest = peek();
    if (rest !== undefined) {
      const what =
        rest.kind === ')'
          ? 'unbalanced ")"'
          : rest.kind === 'num'
            ? 'a number without an operator before it'
            : rest.kind === '('
              ? '"(" without an operator before it'
              : `unexpected "${rest.op}"`;
      return { ok: false, error: what, at: rest.at };
    }
    return { ok: true, expr: tree, numbers };
  } catch (e) {
    if (e instanceof ParseFailure) return { ok: false, error: e.error, at: e.at };
    return { ok: false, error: `parser failure: ${e instanceof Error ? e.message : String(e)}`, at: 0 };
  }
}

/** Evaluates a parse tree exactly. Division by zero (anywhere in the tree) is an error, not Infinity. */
export function evaluateExpression(e: Expr): EvalResult {
  if (e.kind === 'number') return { ok: true, value: Rational.of(e.value) };
  const l = evaluateExpression(e.left);
  if (!l.ok) return l;
  const r = evaluateExpression(e.right);
  if (!r.ok) return r;
  switch (e.op) {
    case '+':
      return { ok: true, value: l.value.add(r.value) };
    case '-':
      return { ok: true, value: l.value.sub(r.value) };
    case '*':
      return { ok: true, value: l.value.mul(r.value) };
    case '/': {
      const q = l.value.div(r.value);
      return q === null ? { ok: false, error: `division by zero at column ${e.at + 1}` } : { ok: true, value: q };
    }
  }
}
