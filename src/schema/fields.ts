// The kinds of knob a config is made of (number, enum, boolean, string, weights, names), each declared once with every
// fact about it: doc, default, range, panel section, the date it joined saved trainer states, each enum value's
// formula, its names in TRL, verl and OpenRLHF, and the rules between it and other knobs (FieldRule). Its CLI flag
// is --<name>. Also the rules every boundary (URL, file, UI, CLI, resume) applies to a raw value: checking it,
// parsing it from text, printing its range; and the page and CLI settings that are not knobs (SettingSpec). A leaf
// module: it imports nothing, so the objective's knobs (objective.ts) can sit below the kernels and their twins.

/** Config panel sections, in the order the panel shows them, with the docs/algorithms.md section of their math. */
export const SECTIONS = {
  task: { title: 'Task and model', math: 'docs/algorithms.md#rewards' },
  sampling: { title: 'Sampling', math: 'docs/algorithms.md#sampling' },
  advantage: { title: 'Advantage', math: 'docs/algorithms.md#advantage-estimators' },
  loss: { title: 'Objective', math: 'docs/algorithms.md#policy-losses' },
  regularizers: { title: 'Regularization', math: 'docs/algorithms.md#kl-regularization' },
  optimizer: { title: 'Optimization', math: 'docs/algorithms.md#optimizer' },
  critic: { title: 'Critic (PPO)', math: 'docs/algorithms.md#ppo-value-loss-and-critic' },
  schedule: { title: 'Schedule and evaluation', math: 'docs/algorithms.md#evaluation' },
} as const;
export type Section = keyof typeof SECTIONS;

/** The same knob's name in other trainers: TRL's config field, verl's dotted config path, OpenRLHF's CLI flag. */
export interface OtherNames {
  trl?: string;
  verl?: string;
  openrlhf?: string;
  /** Other spellings people type (older OpenRLHF flags, Hugging Face's `lr`, ...), used for suggestions only. */
  also?: readonly string[];
  /** How the other trainers' knob differs (unit, placement, an extra switch), when it does. */
  note?: string;
}

/** What a field declares beyond its kind and range: other trainers' names and the date it joined saved states. */
export interface FieldFacts extends OtherNames {
  /**
   * The date (YYYY-MM-DD) the field was added after the first saved trainer states (format version 1): a state
   * saved before then lacks it and resumes with its default, which is what that run used. Absent: every saved
   * state holds the field.
   */
  since?: string;
}

interface Common extends FieldFacts {
  doc: string;
  section: Section;
}
export interface NumberField<Nullable extends boolean = boolean> extends Common {
  kind: 'number';
  default: Nullable extends true ? number | null : number;
  min: number;
  max: number;
  integer: boolean;
  minExclusive: boolean;
  maxExclusive: boolean;
  nullable: Nullable;
  /** What null means, for nullable fields. */
  nullMeans?: string;
}
export interface EnumField<V extends string = string> extends Common {
  kind: 'enum';
  default: V;
  values: readonly V[];
  /** Each value's formula or meaning in one line, where the value stands for one (the explain and A/B texts read it). */
  valueDocs?: Readonly<Record<V, ValueDoc>>;
  /** Each value's name in the other trainers, where theirs differ from ours (the exports read it). */
  valueNames?: Readonly<Record<V, ValueNames>>;
}

/** One enum value's name in TRL, verl and OpenRLHF; null: that trainer has no such value (absent: not stated). */
export interface ValueNames {
  trl?: string | null;
  verl?: string | null;
  openrlhf?: string | null;
}

/** One enum value's formula (`1/M`, `-A log pi`) and what its symbols mean. */
export interface ValueDoc {
  formula: string;
  /** The formula's symbols and consequences in words (", " follows the formula when both are shown). */
  where?: string;
}
export interface BooleanField extends Common {
  kind: 'boolean';
  default: boolean;
}
export interface StringField extends Common {
  kind: 'string';
  default: string | null;
  nullMeans: string;
  /** Several lines of text (source code, a data file): the panel edits it in a text area, not a one-line input. */
  multiline?: boolean;
}
export interface WeightsField extends Common {
  kind: 'weights';
  default: Record<string, number> | null;
  nullMeans: string;
}

/** Id -> one-line text (a teacher id -> its checkpoint), or null meaning `nullMeans`. */
export interface NamesField extends Common {
  kind: 'names';
  default: Record<string, string> | null;
  nullMeans: string;
  /** What a key is and what its value is, in messages: 'teacher id', 'checkpoint'. */
  keyWhat: string;
  valueWhat: string;
}

/** One knob's specification: documentation, default, allowed values, section and other trainers' names. */
export type FieldSpec = NumberField | EnumField | BooleanField | StringField | WeightsField | NamesField;

/** The TypeScript type of a field's value. */
export type ValueOf<F> =
  F extends EnumField<infer V>
    ? V
    : F extends NumberField<infer Nl>
      ? Nl extends true
        ? number | null
        : number
      : F extends BooleanField
        ? boolean
        : F extends StringField
          ? string | null
          : F extends WeightsField
            ? Record<string, number> | null
            : F extends NamesField
              ? Record<string, string> | null
              : never;

/** The config type a record of fields describes. */
export type ConfigOf<Fs> = { [K in keyof Fs]: ValueOf<Fs[K]> };

// ---------------------------------------------------------------------------------------------------------
// Constructors. The section is stamped by `section()`, so each field is written with its doc and range only.

type Unsectioned<F> = Omit<F, 'section'>;
interface NumOpts extends FieldFacts {
  minExclusive?: boolean;
  maxExclusive?: boolean;
}
const num = <Nl extends boolean>(
  doc: string,
  def: Nl extends true ? number | null : number,
  min: number,
  max: number,
  integer: boolean,
  nullable: Nl,
  o: NumOpts,
  nullMeans?: string,
): Unsectioned<NumberField<Nl>> => {
  const { minExclusive, maxExclusive, ...names } = o;
  return {
    kind: 'number',
    doc,
    default: def,
    min,
    max,
    integer,
    minExclusive: !!minExclusive,
    maxExclusive: !!maxExclusive,
    nullable,
    ...(nullMeans ? { nullMeans } : {}),
    ...names,
  };
};
/** A whole number in [min, max]. */
export const int = (doc: string, def: number, min: number, max: number, o: FieldFacts = {}) =>
  num<false>(doc, def, min, max, true, false, o);
/** A whole number in [min, max], or null meaning `nullMeans`. */
export const optInt = (
  doc: string,
  nullMeans: string,
  def: number | null,
  min: number,
  max: number,
  o: FieldFacts = {},
) => num<true>(doc, def, min, max, true, true, o, nullMeans);
/** A real number in the range (ends exclusive when asked). */
export const real = (doc: string, def: number, min: number, max: number, o: NumOpts = {}) =>
  num<false>(doc, def, min, max, false, false, o);
/** A real number in the range, or null meaning `nullMeans`. */
export const optReal = (
  doc: string,
  nullMeans: string,
  def: number | null,
  min: number,
  max: number,
  o: NumOpts = {},
) => num<true>(doc, def, min, max, false, true, o, nullMeans);
/** One of `values` (with `valueDocs`, each value's formula; with `valueNames`, its names in other trainers). */
export const oneOf = <
  const V extends string,
  O extends FieldFacts & {
    valueDocs?: Readonly<Record<NoInfer<V>, ValueDoc>>;
    valueNames?: Readonly<Record<NoInfer<V>, ValueNames>>;
  } = FieldFacts,
>(
  doc: string,
  values: readonly V[],
  def: NoInfer<V>,
  o: O = {} as O,
): Unsectioned<EnumField<V>> & Pick<O, 'valueDocs' | 'valueNames'> => ({
  kind: 'enum',
  doc,
  default: def,
  values,
  ...o,
});
/** true or false. */
export const flag = (doc: string, def: boolean, o: FieldFacts = {}): Unsectioned<BooleanField> => ({
  kind: 'boolean',
  doc,
  default: def,
  ...o,
});
/** Non-empty text, or null meaning `nullMeans`. */
export const optString = (doc: string, nullMeans: string, o: FieldFacts = {}): Unsectioned<StringField> => ({
  kind: 'string',
  doc,
  default: null,
  nullMeans,
  ...o,
});
/** Non-empty text of several lines (source code, a data file), or null meaning `nullMeans`. */
export const optText = (doc: string, nullMeans: string, o: FieldFacts = {}): Unsectioned<StringField> => ({
  kind: 'string',
  doc,
  default: null,
  nullMeans,
  multiline: true,
  ...o,
});
/** Reward function name -> weight, or null meaning `nullMeans`. */
export const weights = (doc: string, nullMeans: string, o: FieldFacts = {}): Unsectioned<WeightsField> => ({
  kind: 'weights',
  doc,
  default: null,
  nullMeans,
  ...o,
});

/** Id -> one-line text (a teacher id -> its checkpoint), or null meaning `nullMeans`. */
export const names = (
  doc: string,
  nullMeans: string,
  what: { key: string; value: string },
  o: FieldFacts = {},
): Unsectioned<NamesField> => ({
  kind: 'names',
  doc,
  default: null,
  nullMeans,
  keyWhat: what.key,
  valueWhat: what.value,
  ...o,
});

/** A names field's key: a letter or digit first, then letters, digits, _ . -, at most 64 in all. */
export const NAME_KEY = /^[A-Za-z0-9][\w.-]{0,63}$/;

/** The fields of one panel section, each stamped with it. */
export function section<S extends Section, Fs extends Record<string, Unsectioned<FieldSpec>>>(
  s: S,
  fields: Fs,
): { [K in keyof Fs]: Fs[K] & { section: S } } {
  return Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, { ...f, section: s }])) as {
    [K in keyof Fs]: Fs[K] & { section: S };
  };
}

/**
 * A rule between fields: `problem` returns the message (starting with the field to change, stating the rule) for
 * a config that breaks it, else null. 'kernel' rules are what the objective needs to be defined at all (the twin
 * and the GPU refuse those too); 'training' rules only the training config's validation applies.
 */
export interface FieldRule<C> {
  scope: 'kernel' | 'training';
  problem: (c: C) => string | null;
}

/** The messages of every rule `c` breaks, in the rules' order ('kernel' scope: the kernel rules only). */
export function ruleProblems<C>(
  rules: readonly FieldRule<C>[],
  c: C,
  scope: 'kernel' | 'training' = 'training',
): string[] {
  const out: string[] = [];
  for (const rule of rules) {
    if (scope === 'kernel' && rule.scope !== 'kernel') continue;
    const p = rule.problem(c);
    if (p !== null) out.push(p);
  }
  return out;
}

/**
 * A setting of the page or the CLIs that is not a knob of the experiment: it changes where things come from (the
 * hub's address), never what a run computes, so it is no config field, no part of a link or a saved run.
 */
export interface SettingSpec {
  doc: string;
  /** The value's placeholder in --help (`<URL>`). */
  value: string;
  /** The environment variable the CLIs read when the flag is not given. */
  env?: string;
  /** The key under which the page keeps the value in its storage. */
  storageKey?: string;
  default: string;
}

/** Every field's default: the base every preset starts from. */
export function defaultsOf<Fs extends Record<string, FieldSpec>>(fields: Fs): ConfigOf<Fs> {
  return Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f.default])) as ConfigOf<Fs>;
}

// ---------------------------------------------------------------------------------------------------------
// Checking and parsing raw values. Every message starts with the field's name and states the rule.

/** Rendering of a number field's range: [0, 1), (0, 100], ... */
export function rangeText(spec: NumberField): string {
  return `${spec.minExclusive ? '(' : '['}${spec.min}, ${spec.max}${spec.maxExclusive ? ')' : ']'}`;
}

/**
 * Whether `key` names one of `fields` itself: an own property, so the names every object inherits (constructor,
 * toString, __proto__) are never taken for fields, however a config arrives (JSON, link, flag, file header).
 */
export function isFieldName(fields: object, key: string): boolean {
  return Object.hasOwn(fields, key);
}

/** Longest text a message quotes from its input: a value or name longer than this is shown cut, with its length. */
export const MAX_QUOTED = 80;

/** `text` as a message quotes it: at most MAX_QUOTED characters, longer text cut with "... (N characters)". */
export function clipText(text: string, max = MAX_QUOTED): string {
  return text.length <= max ? text : `${text.slice(0, max)}... (${text.length} characters)`;
}

/** A string quoted for a message (JSON-escaped), cut to MAX_QUOTED characters. */
export function quote(text: string): string {
  return text.length <= MAX_QUOTED
    ? JSON.stringify(text)
    : `${JSON.stringify(text.slice(0, MAX_QUOTED))}... (${text.length} characters)`;
}

/** Control characters (C0, DEL, C1) and the line and paragraph separators U+2028/U+2029. */
const CONTROL_CHARACTER = /[\p{Cc}\u2028\u2029]/u;

/** What is wrong with `v` as the value of field `key`, or null when it is allowed. */
export function fieldProblem(key: string, spec: FieldSpec, v: unknown): string | null {
  const got = describe(v);
  switch (spec.kind) {
    case 'number': {
      if (v === null) return spec.nullable ? null : `${key}: must be a number in ${rangeText(spec)}, got null`;
      if (typeof v !== 'number' || !Number.isFinite(v))
        return `${key}: must be a ${spec.integer ? 'whole ' : ''}number in ${rangeText(spec)}${spec.nullable ? ` or null (${spec.nullMeans})` : ''}, got ${got}`;
      if (spec.integer && !Number.isInteger(v)) return `${key}: must be a whole number, got ${v}`;
      const low = spec.minExclusive ? v <= spec.min : v < spec.min;
      const high = spec.maxExclusive ? v >= spec.max : v > spec.max;
      if (low || high) return `${key}: must be in ${rangeText(spec)}, got ${v}`;
      return null;
    }
    case 'enum':
      if (typeof v === 'string' && spec.values.includes(v)) return null;
      return `${key}: must be one of ${spec.values.join(', ')}; got ${got}${typeof v === 'string' ? suggestion(v, spec.values) : ''}`;
    case 'boolean':
      return typeof v === 'boolean' ? null : `${key}: must be true or false, got ${got}`;
    case 'string':
      if (typeof v === 'string' && v.trim() !== '') {
        // A one-line value (a name, a path, a URL) never holds a line break or another control character: one
        // from a link or a file would otherwise travel on into scripts, comments and file names.
        const control = spec.multiline ? null : CONTROL_CHARACTER.exec(v);
        if (control)
          return `${key}: must be one line without control characters; got ${got} with U+${(control[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')} at ${control.index}`;
        return null;
      }
      if (v === null) return null;
      return `${key}: must be a non-empty string or null (${spec.nullMeans}), got ${got}`;
    case 'weights': {
      if (v === null) return null;
      if (typeof v !== 'object' || Array.isArray(v))
        return `${key}: must be an object of reward function name -> weight, or null (${spec.nullMeans}), got ${got}`;
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) return `${key}: needs at least one reward function (or null: ${spec.nullMeans})`;
      for (const [name, w] of entries) {
        if (!/^[A-Za-z_][\w.-]*$/.test(name))
          return `${key}: reward function name ${quote(name)} must start with a letter or _ and use letters, digits, _ . -`;
        if (typeof w !== 'number' || !Number.isFinite(w))
          return `${key}: the weight of ${name} must be a finite number, got ${describe(w)}`;
        if (w < -100 || w > 100) return `${key}: the weight of ${name} must be in [-100, 100], got ${w}`;
      }
      return null;
    }
    case 'names': {
      if (v === null) return null;
      if (typeof v !== 'object' || Array.isArray(v))
        return `${key}: must be an object of ${spec.keyWhat} -> ${spec.valueWhat}, or null (${spec.nullMeans}), got ${got}`;
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) return `${key}: needs at least one ${spec.keyWhat} (or null: ${spec.nullMeans})`;
      for (const [name, value] of entries) {
        if (!NAME_KEY.test(name))
          return `${key}: the ${spec.keyWhat} ${quote(name)} must start with a letter or digit and use letters, digits, _ . - (at most 64)`;
        if (typeof value !== 'string' || value.trim() === '')
          return `${key}: the ${spec.valueWhat} of ${name} must be non-empty text, got ${describe(value)}`;
        const control = CONTROL_CHARACTER.exec(value);
        if (control)
          return `${key}: the ${spec.valueWhat} of ${name} must be one line without control characters; got ${describe(value)} with U+${(control[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')} at ${control.index}`;
      }
      return null;
    }
  }
}

/**
 * Every problem of a raw, complete config over `fields`: unknown names (with the nearest field or the other
 * trainer's name it matches) and values outside their rules.
 */
export function fieldProblems(
  fields: Readonly<Record<string, FieldSpec>>,
  raw: Readonly<Record<string, unknown>>,
): string[] {
  const errors: string[] = [];
  for (const key of Object.keys(raw)) if (!isFieldName(fields, key)) errors.push(unknownFieldMessage(key, fields));
  for (const [key, spec] of Object.entries(fields)) {
    if (!Object.hasOwn(raw, key)) errors.push(`${key}: missing (${spec.doc})`);
    else {
      const problem = fieldProblem(key, spec, raw[key]);
      if (problem) errors.push(problem);
    }
  }
  return errors;
}

/** Parses one field's text (URL parameter or CLI flag) to its type; `{ error }` names the field and what was expected. */
export function decodeFieldText(key: string, spec: FieldSpec, text: string): unknown {
  const s = text.trim();
  const isNull = s === '' || s === 'null';
  switch (spec.kind) {
    case 'number': {
      if (isNull)
        return spec.nullable ? null : { error: `${key}: must be a number in ${rangeText(spec)}, got an empty value` };
      const v = Number(s);
      if (!Number.isFinite(v))
        return {
          error: `${key}: must be a number in ${rangeText(spec)}${spec.nullable ? ' or empty (null)' : ''}, got ${quote(text)}`,
        };
      return v;
    }
    case 'boolean':
      if (s === 'true' || s === '1') return true;
      if (s === 'false' || s === '0') return false;
      return { error: `${key}: must be true or false, got ${quote(text)}` };
    case 'enum':
      return s;
    case 'string':
      return isNull ? null : s;
    case 'weights': {
      if (isNull) return null;
      if (s.startsWith('{')) return parseJsonField(key, s, text);
      // A null-prototype map, so a name like __proto__ is an entry (and refused by the weights rule), not a prototype.
      const out: Record<string, number> = Object.create(null) as Record<string, number>;
      for (const part of s.split(',')) {
        const m = /^\s*([^:\s]+)\s*:\s*(\S+)\s*$/.exec(part);
        const w = m ? Number(m[2]) : NaN;
        if (!m || !Number.isFinite(w))
          return {
            error: `${key}: expected name:weight pairs separated by commas (accuracy:0.8,format:0.2), got ${quote(text)}`,
          };
        out[m[1]] = w;
      }
      return { ...out };
    }
    case 'names': {
      if (isNull) return null;
      if (s.startsWith('{')) return parseJsonField(key, s, text);
      // A null-prototype map, so a key like __proto__ is an entry (and refused by the names rule), not a prototype.
      const out: Record<string, string> = Object.create(null) as Record<string, string>;
      for (const part of s.split(',')) {
        const at = part.indexOf('=');
        const name = at > 0 ? part.slice(0, at).trim() : '';
        const value = at > 0 ? part.slice(at + 1).trim() : '';
        if (!name || !value)
          return {
            error: `${key}: expected ${spec.keyWhat}=${spec.valueWhat} pairs separated by commas (math=checkpoints/a,code=checkpoints/b) or JSON, got ${quote(text)}`,
          };
        out[name] = value;
      }
      return { ...out };
    }
  }
}

/** A map field written as JSON (weights, names): the parsed value for the field's rule, or the error naming the key. */
function parseJsonField(key: string, s: string, text: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return { error: `${key}: not valid JSON: ${quote(text)}` };
  }
}

/** One field's value as text (URL parameter, CLI flag): numbers as JS prints them, null as '', weights as name:w,name:w. */
export function encodeFieldText(v: unknown): string {
  if (v === null || v === undefined) return '';
  // Names (id -> text) as JSON: their text may hold the commas and colons the pairs form separates by.
  if (typeof v === 'object' && Object.values(v).some((x) => typeof x === 'string')) return JSON.stringify(v);
  if (typeof v === 'object')
    return Object.entries(v)
      .map(([k, w]) => `${k}:${String(w)}`)
      .join(',');
  return String(v);
}

/** A field's kind and allowed values in one line (help text, tooltips): "num in (0, 1], or null (epsilon)". */
export function kindText(spec: FieldSpec): string {
  switch (spec.kind) {
    case 'number':
      return `${spec.integer ? 'int' : 'num'} in ${rangeText(spec)}${spec.nullable ? `, or null (${spec.nullMeans})` : ''}`;
    case 'enum':
      return spec.values.join('|');
    case 'boolean':
      return 'true|false';
    case 'string':
      return `text, or null (${spec.nullMeans})`;
    case 'weights':
      return `name:w,name:w, or null (${spec.nullMeans})`;
    case 'names':
      return `${spec.keyWhat}=${spec.valueWhat},..., or JSON, or null (${spec.nullMeans})`;
  }
}

/** Two values of a field are the same (numbers, strings, booleans, null; weight objects by entries, in any order). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return (
      ka.length === kb.length &&
      ka.every((k, i) => k === kb[i] && (a as Record<string, unknown>)[k] === (b as Record<string, unknown>)[k])
    );
  }
  return false;
}

/** A value as a message shows it. */
export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'string') return quote(v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object' && v !== null) return 'an object';
  return String(v);
}

// ---------------------------------------------------------------------------------------------------------
// Names: the nearest field for a misspelled name, and other trainers' names for our fields.

/**
 * The other names a field answers to, lower case: each trainer's name in full and its last segment (verl's dotted
 * path, TRL's `PPOConfig.lam`, OpenRLHF's `--algo.kl.init_coef`), and `also`.
 */
export function otherNamesOf(spec: OtherNames): string[] {
  const out = new Set<string>();
  for (const name of [spec.trl, spec.verl, spec.openrlhf]) {
    for (const one of (name ?? '').split(' / ')) {
      const bare = one.trim().replace(/^--/, '');
      if (!bare) continue;
      out.add(bare);
      out.add(bare.slice(bare.lastIndexOf('.') + 1));
    }
  }
  for (const a of spec.also ?? []) out.add(a);
  return [...out].map((s) => s.toLowerCase());
}

/**
 * The field a foreign or misspelled name means: an exact match of another trainer's name first (`kl_coef` ->
 * beta), then the nearest of our names and theirs within a small edit distance (`num_generation` ->
 * num_generations). Null when nothing is close.
 */
export function nearestField(
  name: string,
  fields: Readonly<Record<string, object>>,
): { field: string; via: string | null } | null {
  // No field name is near this long: the edit-distance search costs length x length per candidate.
  if (name.length > MAX_SUGGESTED_NAME) return null;
  const lower = name.replace(/^-+/, '').toLowerCase();
  const candidates = candidatesOf(fields);
  const normLower = normName(lower);
  const exact = candidates.find((c) => c.name === lower) ?? candidates.find((c) => c.norm === normLower);
  if (exact) return { field: exact.field, via: exact.foreign ? exact.name : null };
  const limit = Math.max(1, Math.min(3, Math.floor(lower.length / 3)));
  let best: Candidate | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    // Names whose lengths differ by more than the limit are farther than it: no need to measure them.
    if (Math.abs(c.name.length - lower.length) > limit) continue;
    const d = editDistance(lower, c.name);
    if (d < bestD || (d === bestD && best?.foreign && !c.foreign)) {
      bestD = d;
      best = c;
    }
  }
  return best && bestD <= limit ? { field: best.field, via: best.foreign ? best.name : null } : null;
}

interface Candidate {
  name: string;
  norm: string;
  field: string;
  foreign: boolean;
}
const normName = (s: string) => s.toLowerCase().replace(/[-_\s.]/g, '');
/** The names each field answers to, per field table (a link with 900 unknown names asks 900 times). */
const candidateCache = new WeakMap<object, Candidate[]>();
function candidatesOf(fields: Readonly<Record<string, object>>): Candidate[] {
  const cached = candidateCache.get(fields);
  if (cached) return cached;
  const candidates: Candidate[] = [];
  for (const [field, spec] of Object.entries(fields)) {
    candidates.push({ name: field, norm: normName(field), field, foreign: false });
    for (const other of otherNamesOf(spec as OtherNames))
      if (other !== field) candidates.push({ name: other, norm: normName(other), field, foreign: true });
  }
  candidateCache.set(fields, candidates);
  return candidates;
}

/** Names longer than this get no suggestion (every field name is far shorter). */
export const MAX_SUGGESTED_NAME = 64;

/** "unknown field X; did you mean Y? (...)" for a name that is not a field (a long name shown cut). */
export function unknownFieldMessage(key: string, fields: Readonly<Record<string, object>>, what = 'field'): string {
  const near = nearestField(key, fields);
  if (!near) return `unknown ${what} ${clipText(key)}`;
  return `unknown ${what} ${key}; did you mean ${near.field}?${near.via && near.via === key.replace(/^-+/, '').toLowerCase() ? ` (${key} is another trainer's name for it)` : ''}`;
}

/** "; did you mean X?" when some candidate is a small edit away (or the same name in another case/spelling), else "". */
export function suggestion(name: string, candidates: readonly string[]): string {
  const near = nearestField(name, Object.fromEntries(candidates.map((c) => [c, {}])));
  return near ? `; did you mean ${near.field}?` : '';
}

/** Levenshtein distance (insertions, deletions, substitutions), with adjacent transpositions counted as one. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}
