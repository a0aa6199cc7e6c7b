// How config problems are shown to a person: a list as its first few, each cut to a readable length, and a count
// of the rest; a JSON text by where it first goes wrong and what the grammar expected there, with line, column
// and a caret under the spot (JSON.parse's own errors name neither the line nor what was expected).

/** Problems a summary lists; the rest are counted. */
export const SUMMARY_SHOWN = 5;
/** Longest line of a summary: a problem's message past this is cut (its values are already cut to 80 characters). */
export const SUMMARY_LINE = 240;

/** The first SUMMARY_SHOWN problems, one per line, each cut to SUMMARY_LINE characters, then "and N more". */
export function summarizeProblems(problems: readonly string[]): string {
  const lines = problems
    .slice(0, SUMMARY_SHOWN)
    .map((p) => (p.length > SUMMARY_LINE ? `${p.slice(0, SUMMARY_LINE)}...` : p));
  const rest = problems.length - lines.length;
  if (rest > 0) lines.push(`and ${rest} more problem${rest === 1 ? '' : 's'}`);
  return lines.join('\n');
}

/** Nesting the JSON error search follows; no config comes near it. */
export const MAX_JSON_DEPTH = 1000;

/** "config JSON: line L, column C: <what was expected>" plus the line and a caret. */
export function jsonErrorMessage(text: string, err: unknown): string {
  const located = locateJsonError(text);
  if (!located) return `config JSON: ${err instanceof Error ? err.message : String(err)}`;
  const before = text.slice(0, located.pos);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = located.pos - lineStart + 1;
  const lineEnd = text.indexOf('\n', lineStart);
  // A long line (minified JSON) is shown as a window around the spot, so the caret stays under it.
  const from = Math.max(lineStart, located.pos - 60);
  const to = Math.min(lineEnd < 0 ? text.length : lineEnd, located.pos + 20);
  const lineText = `${from > lineStart ? '...' : ''}${text.slice(from, to)}${to < (lineEnd < 0 ? text.length : lineEnd) ? '...' : ''}`;
  const caretAt = located.pos - from + (from > lineStart ? 3 : 0);
  const found = located.pos >= text.length ? 'the end of the text' : JSON.stringify(text[located.pos]);
  return `config JSON: line ${line}, column ${column} (position ${located.pos}): expected ${located.expected}, found ${found}\n    ${lineText}\n    ${' '.repeat(caretAt)}^`;
}

/** Where a JSON text first goes wrong and what the grammar expected there (null if it parses). */
export function locateJsonError(text: string): { pos: number; expected: string } | null {
  let i = 0;
  class Fail {
    constructor(
      readonly pos: number,
      readonly expected: string,
    ) {}
  }
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const literal = (word: string) => {
    for (let k = 0; k < word.length; k++) if (text[i + k] !== word[k]) throw new Fail(i + k, `${JSON.stringify(word)}`);
    i += word.length;
  };
  const string = () => {
    if (text[i] !== '"') throw new Fail(i, 'a string in double quotes');
    i++;
    while (i < text.length && text[i] !== '"') {
      const ch = text.charCodeAt(i);
      if (ch < 0x20) throw new Fail(i, 'no raw control character inside a string (write \\n, \\t)');
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          for (let k = 1; k <= 4; k++)
            if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) throw new Fail(i + k, 'four hex digits after \\u');
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? '') || i >= text.length)
          throw new Fail(i, 'an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX');
      }
      i++;
    }
    if (i >= text.length) throw new Fail(i, 'a closing " of the string');
    i++;
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) throw new Fail(i, 'a value (object, array, string, number, true, false or null)');
    i += m[0].length;
  };
  let depth = 0;
  const value = (): void => {
    ws();
    const ch = text[i];
    // The search recurses per level: past MAX_JSON_DEPTH it reports the spot instead of overflowing the stack.
    if ((ch === '{' || ch === '[') && depth >= MAX_JSON_DEPTH)
      throw new Fail(i, `at most ${MAX_JSON_DEPTH} levels of nested objects and arrays`);
    if (ch === '{' || ch === '[') {
      depth++;
      try {
        container(ch);
      } finally {
        depth--;
      }
      return;
    }
    if (ch === '"') return string();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    number();
  };
  const container = (ch: string): void => {
    if (ch === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') throw new Fail(i, 'a property name in double quotes');
        string();
        ws();
        if (text[i] !== ':') throw new Fail(i, "':' after the property name");
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        throw new Fail(i, "',' or '}' after a property value");
      }
    }
    if (ch === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        throw new Fail(i, "',' or ']' after an array element");
      }
    }
  };
  try {
    value();
    ws();
    if (i < text.length) throw new Fail(i, 'the end of the text after the top-level value');
    return null;
  } catch (e) {
    if (e instanceof Fail) return { pos: e.pos, expected: e.expected };
    throw e;
  }
}
