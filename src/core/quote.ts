// How an export writes a value in each of its target languages, so that no value (a model name, a config field, a
// prompt) can change the meaning of the file it lands in: POSIX shell words in single quotes, Python string
// literals escaped like repr, comment and Markdown text as escaped literals on one line, Hydra override values
// of a safe alphabet only, and JSON through JSON.stringify. A value a target cannot hold is refused with an
// ExportValueError naming the field. Every writer of render.ts goes through these; quoting.test.ts feeds them
// hostile text.

/** A value an export cannot write into its target; the message starts with the field it is about. */
export class ExportValueError extends Error {
  override name = 'ExportValueError';
}

/** A UTF-16 surrogate without its pair: a UTF-8 file cannot hold it (it would be written as U+FFFD). */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The start of a value for a message: escaped, on one line, at most 60 characters of it. */
export function shown(s: string): string {
  return s.length <= 60 ? pyString(s) : `${pyString(s.slice(0, 60))}... (${s.length} characters)`;
}

/**
 * Refuses what no exported file can hold as raw text: NUL (a shell script and the bundle's here-documents drop
 * it) and unpaired surrogates (UTF-8 cannot encode them). Returns the text.
 */
export function checkWritable(field: string, s: string): string {
  const nul = s.indexOf('\0');
  if (nul >= 0)
    throw new ExportValueError(
      `${field}: has a NUL character (at ${nul}), which an exported file cannot hold; remove it (${shown(s)})`,
    );
  const lone = UNPAIRED_SURROGATE.exec(s);
  if (lone)
    throw new ExportValueError(
      `${field}: has an unpaired UTF-16 surrogate (at ${lone.index}), which a UTF-8 file cannot hold (${shown(s)})`,
    );
  return s;
}

// ---------------------------------------------------------------------------------------------------------
// POSIX shell

/** One shell word in single quotes: nothing inside is expanded; a quote is written '\''. Refuses NUL. */
export function shellQuote(field: string, s: string): string {
  checkWritable(field, s);
  return `'${s.replaceAll("'", "'\\''")}'`;
}

/** Characters no POSIX shell treats specially in an unquoted word (no globs, expansions, separators, `~`). */
const PLAIN_WORD = /^[A-Za-z0-9_.,:/=+-]+$/;

/** A shell word: bare when it has only plain characters (a flag, a number), else single-quoted. */
export function shellWord(field: string, s: string): string {
  return PLAIN_WORD.test(s) ? s : shellQuote(field, s);
}

// ---------------------------------------------------------------------------------------------------------
// Python string literals, comments and Markdown

/**
 * What a literal never holds raw: the backslash and double quote, control characters (newlines, NUL, escape),
 * format characters (bidirectional overrides that reorder what an editor shows), the line and paragraph
 * separators U+2028/U+2029 and unpaired surrogates.
 */
const ESCAPED = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}"\\]/u;

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '"': '\\"',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

function hexEscape(cp: number): string {
  if (cp < 0x100) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp < 0x10000) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return `\\U${cp.toString(16).padStart(8, '0')}`;
}

/**
 * A Python string literal of `s` in double quotes, escaped as repr escapes it (\\ \" \n \r \t, \xhh, \uhhhh,
 * \Uhhhhhhhh), so it is one line of printable text that ast.literal_eval reads back as `s`. `also` names more
 * ASCII characters to escape (Markdown's | and `).
 */
export function pyString(s: string, also = ''): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ESCAPED.test(ch)) out += SHORT_ESCAPES[ch] ?? hexEscape(cp);
    else if (also.includes(ch)) out += hexEscape(cp);
    else out += ch;
  }
  return `${out}"`;
}

/**
 * Text for a `#` comment (shell or Python) or a Markdown table cell: as it is when it holds nothing a literal
 * escapes, else escaped on one line (the comment can never end early and hold code).
 */
export function commentText(s: string): string {
  return /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u.test(s) ? pyString(s).slice(1, -1) : s;
}

/** A value in a Markdown table's code span: the Python literal with | and ` escaped too. */
export function markdownLiteral(s: string): string {
  return pyString(s, '|`');
}

// ---------------------------------------------------------------------------------------------------------
// Hydra (verl's key=value overrides) and model names

/**
 * Characters a Hydra override value may hold unquoted without meaning anything to Hydra's grammar (a subset of its
 * OverrideLexer's ID and UNQUOTED_CHAR; `+` after the first character, for verl's straight-through `k3+`) or to a shell.
 */
const HYDRA_PLAIN = /^[A-Za-z0-9_./-][A-Za-z0-9_./+-]*$/;

/**
 * Plain words Hydra's override grammar would read as a number (its INT and FLOAT allow '_' between digits, so
 * `0.5_2` is the float 0.52), or a literal: quoted, they stay the string they are (verl's rollout_rs_threshold).
 */
const HYDRA_NOT_A_STRING = /^[+-]?[0-9._]*[0-9][0-9._]*([eE][+-]?[0-9_]+)?$|^(true|false|null|[+-]?inf|nan)$/i;

/** A string value of a verl override: plain characters only, else refused naming the field; quoted where Hydra would not read a string. */
export function hydraWord(field: string, s: string): string {
  if (!HYDRA_PLAIN.test(s))
    throw new ExportValueError(
      `${field}: ${shown(s)} cannot be a verl override value (letters, digits, _ . / - and a + after the first character only)`,
    );
  return HYDRA_NOT_A_STRING.test(s) ? `'${s}'` : s;
}

/** The longest model name or path an export writes. */
export const MAX_MODEL_NAME = 1024;

/**
 * A hub model name (org/name) or a folder path of plain characters: what every trainer reads as the model and
 * what verl's override grammar takes unquoted. Not starting with `-` (an argument parser would read a flag).
 */
const MODEL_NAME = /^[A-Za-z0-9_./][A-Za-z0-9_./-]*$/;

/** The model an export starts from, or ExportValueError naming `field` and what is allowed. */
export function checkModelName(field: string, s: string): string {
  if (s.length > MAX_MODEL_NAME || !MODEL_NAME.test(s))
    throw new ExportValueError(
      `${field}: ${shown(s)} is not a hub model name (org/name) or a folder path the trainers read: use letters, digits, _ . - and /, not starting with -, at most ${MAX_MODEL_NAME} characters (rename the folder, or set MODEL when running the script)`,
    );
  return s;
}
