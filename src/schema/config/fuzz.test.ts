// Fuzz cases for the config's text boundaries: JSON files, shared links (URL parameters) and CLI flags. Seeded
// and table-driven, no GPU. Every case ends one of two ways: accepted as a config that validates, or refused with
// the boundary's own error (RLConfigError, UsageError) whose problems each name a field, a flag or the JSON spot;
// never a TypeError/RangeError. Cases built to be wrong (a bad value for its field's kind, a name that is no
// field, broken JSON) must be refused naming what is wrong: never accepted in silence.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/args';
import { parseRlArgs } from '../../cli/train-rl';
import { badJsonValues, badTextValues, INHERITED_NAMES, pick, unknownNames } from '../../reference/fuzz-inputs';
import { Rng } from '../../core/random';
import { clipText } from '../fields';
import { configFromUrlParams, configFromUrlParamsKeeping, configToJson, parseConfigJson } from './codecs';
import { summarizeProblems } from './messages';
import { PRESET_NAMES } from './presets';
import { FIELD_NAMES, FIELD_SPECS, type RLField } from './schema';
import { RLConfigError, checkConfig, resolveConfig } from './validate';

/** A fuzz case: the input, and when it is wrong by construction, a text the refusal must contain. */
interface Case<I> {
  label: string;
  input: I;
  mustName: string | null;
}

/** What the boundary did: accepted (with the value), or refused with its problems. */
type Outcome<T> = { accepted: T } | { problems: string[] };

/** Runs a boundary, turning its own errors into problems; anything else (a crash) propagates and fails the case. */
function outcome<T>(f: () => T): Outcome<T> {
  try {
    return { accepted: f() };
  } catch (e) {
    if (e instanceof RLConfigError) return { problems: e.problems };
    if (e instanceof UsageError) return { problems: e.message.split('\n').map((l) => l.trim()) };
    throw e;
  }
}

/** A problem names what it is about first: a field or flag, "unknown ...", "config JSON", "preset". */
const NAMED = /^(config JSON: |unknown (field|flag) |unexpected argument |preset: |--?[a-z]|"?[A-Za-z_][\w.-]*"?: )/;
/** Longest problem a boundary may print: values and names inside are cut to 80 characters. */
const MAX_PROBLEM = 600;

function expectOutcome<T>(c: Case<unknown>, o: Outcome<T>, accepted: (v: T) => void): void {
  if ('accepted' in o) {
    expect(c.mustName, `${c.label}: accepted in silence`).toBeNull();
    accepted(o.accepted);
    return;
  }
  expect(o.problems.length, c.label).toBeGreaterThan(0);
  for (const p of o.problems) {
    expect(p, c.label).toMatch(NAMED);
    expect(p.length, `${c.label}: ${p.slice(0, 120)}`).toBeLessThanOrEqual(MAX_PROBLEM);
  }
  if (c.mustName !== null) expect(o.problems.join('\n'), c.label).toContain(c.mustName);
}

const expectValid = (config: unknown) => expect(checkConfig(config as Record<string, unknown>).errors).toEqual([]);

/** How a message shows a name: cut to 80 characters. */
const shown = (name: string) => clipText(name).slice(0, 60);

// ---------------------------------------------------------------------------------------------------------
// Configs (JSON)

function jsonCases(): Case<string>[] {
  const rng = new Rng(20_261_124);
  const cases: Case<string>[] = [];
  // Every field with every value wrong for its kind, over a random preset.
  for (const field of FIELD_NAMES) {
    for (const bad of badJsonValues(FIELD_SPECS[field])) {
      const preset = pick(rng, PRESET_NAMES);
      cases.push({
        label: `json ${field}=${clipText(JSON.stringify(bad) ?? 'undefined', 30)}`,
        input: JSON.stringify({ preset, [field]: bad }),
        mustName: `${field}:`,
      });
    }
  }
  // Names that are no field, alone and next to good fields.
  for (const name of unknownNames(rng)) {
    cases.push({
      label: `json unknown ${clipText(name, 20)}`,
      input: `{ "preset": "grpo", "seed": 3, ${JSON.stringify(name)}: 1 }`,
      mustName: `unknown field ${shown(name)}`,
    });
  }
  // Valid configs of every preset, cut short anywhere: broken JSON, reported at its spot.
  for (let i = 0; i < 60; i++) {
    const preset = pick(rng, PRESET_NAMES);
    const text = configToJson(resolveConfig(preset, { seed: rng.int(100) }), preset);
    const cut = 1 + rng.int(text.length - 2);
    cases.push({ label: `json ${preset} cut at ${cut}`, input: text.slice(0, cut), mustName: 'config JSON: line' });
  }
  // One random character inserted anywhere: refused or (when still a valid config) accepted, never a crash.
  for (let i = 0; i < 60; i++) {
    const preset = pick(rng, PRESET_NAMES);
    const text = configToJson(resolveConfig(preset), preset);
    const at = rng.int(text.length);
    cases.push({
      label: `json ${preset} + char at ${at}`,
      input:
        text.slice(0, at) +
        pick(rng, ['"', '{', '}', ',', ':', '1', 'x', ' ', '\\', '\u0000', '[', ']']) +
        text.slice(at),
      mustName: null,
    });
  }
  // Not an object at the top, deep nesting, a duplicate key, a __proto__ object.
  for (const text of ['[]', '5', '"grpo"', 'null', 'true'])
    cases.push({ label: `json top ${text}`, input: text, mustName: 'config JSON: the top level must be an object' });
  cases.push({
    label: 'json deep valid nesting',
    input: `{ "beta": ${'['.repeat(5000)}${']'.repeat(5000)} }`,
    mustName: 'beta:',
  });
  cases.push({
    label: 'json deep broken nesting',
    input: `{ "beta": ${'['.repeat(100_000)}`,
    mustName: 'config JSON: line 1',
  });
  cases.push({
    label: 'json long broken line',
    input: `{ "seed": 1, "x": "${'a'.repeat(100_000)}`,
    mustName: 'config JSON: line 1',
  });
  cases.push({
    label: 'json __proto__ object',
    input: '{ "__proto__": { "beta": 5 } }',
    mustName: 'unknown field __proto__',
  });
  cases.push({ label: 'json preset wrong type', input: '{ "preset": 5 }', mustName: 'preset:' });
  cases.push({ label: 'json preset unknown', input: `{ "preset": "${'g'.repeat(10_000)}" }`, mustName: 'preset:' });
  return cases;
}

// ---------------------------------------------------------------------------------------------------------
// Links (URL parameters)

function linkCases(): Case<string>[] {
  const rng = new Rng(424_242);
  const cases: Case<string>[] = [];
  for (const field of FIELD_NAMES) {
    for (const bad of badTextValues(FIELD_SPECS[field])) {
      const p = new URLSearchParams({ preset: pick(rng, PRESET_NAMES), seed: String(rng.int(1000)) });
      p.set(field, bad);
      cases.push({ label: `link ${field}=${clipText(bad, 30)}`, input: p.toString(), mustName: `${field}:` });
    }
  }
  for (const name of unknownNames(rng)) {
    const p = new URLSearchParams({ seed: '2' });
    p.set(name, '1');
    cases.push({
      label: `link unknown ${clipText(name, 20)}`,
      input: p.toString(),
      mustName: `unknown field ${shown(name)}`,
    });
  }
  const many = new URLSearchParams();
  for (let i = 0; i < 900; i++) many.set(`unknown_${i}`, '1');
  cases.push({ label: 'link 900 unknown fields', input: many.toString(), mustName: 'unknown field unknown_0' });
  cases.push({ label: 'link field twice', input: 'seed=1&seed=2', mustName: 'seed: given twice' });
  cases.push({ label: 'link preset unknown', input: 'preset=grpoo', mustName: 'preset: must be one of' });
  // Random values of random fields: refused by name or accepted as a valid config.
  const texts = [
    '0',
    '1',
    '-1',
    '0.5',
    '1e-30',
    '1e30',
    '',
    'null',
    'true',
    'false',
    'grpo',
    'accuracy:1',
    'addition',
    '%',
    '\u0000',
  ];
  for (let i = 0; i < 120; i++) {
    const p = new URLSearchParams({ preset: pick(rng, PRESET_NAMES) });
    for (let k = 1 + rng.int(4); k > 0; k--) p.set(pick(rng, FIELD_NAMES), pick(rng, texts));
    cases.push({ label: `link random ${p}`, input: p.toString(), mustName: null });
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------------------
// CLI flags

function flagCases(): Case<string[]>[] {
  const rng = new Rng(777);
  const cases: Case<string[]>[] = [];
  for (const field of FIELD_NAMES) {
    for (const bad of badTextValues(FIELD_SPECS[field])) {
      if (FIELD_SPECS[field].kind === 'boolean' && bad === '') continue; // `--flag=` of a boolean: see decodeFieldText
      const argv = rng.next() < 0.5 ? [`--${field}`, bad] : [`--${field}=${bad}`];
      // A value starting with -- is read as the next flag: then the field has no value, also refused by name.
      cases.push({ label: `flag --${field} ${clipText(bad, 30)}`, input: ['--seed', '1', ...argv], mustName: field });
    }
  }
  for (const name of unknownNames(rng)) {
    if (name.startsWith('-')) continue;
    cases.push({
      label: `flag unknown --${clipText(name, 20)}`,
      input: [`--${name}`, '1'],
      mustName: `unknown flag --${shown(name)}`,
    });
  }
  for (const name of INHERITED_NAMES)
    cases.push({ label: `flag --${name}=5`, input: [`--${name}=5`], mustName: `unknown flag --${name}` });
  cases.push({ label: 'flag stray argument', input: ['x'.repeat(10_000)], mustName: 'unexpected argument' });
  const texts = ['0', '1', '0.5', '1e-9', 'true', 'grpo', 'accuracy:1'];
  for (let i = 0; i < 80; i++) {
    const argv: string[] = [];
    for (let k = 1 + rng.int(4); k > 0; k--) argv.push(`--${pick(rng, FIELD_NAMES)}=${pick(rng, texts)}`);
    cases.push({ label: `flag random ${argv.join(' ')}`, input: argv, mustName: null });
  }
  return cases;
}

/** The config a train command's field flags describe (the defaults under them), as train-rl builds it. */
function configFromFlags(argv: string[]) {
  const { fields } = parseRlArgs(argv);
  return resolveConfig(null, fields as Partial<Record<RLField, unknown>>);
}

const JSON_CASES = jsonCases();
const LINK_CASES = linkCases();
const FLAG_CASES = flagCases();

describe('fuzz: configs (JSON)', () => {
  it.each(JSON_CASES.map((c) => [c.label, c] as const))('%s', (_, c) => {
    expectOutcome(
      c,
      outcome(() => parseConfigJson(c.input)),
      expectValid,
    );
  });
});

describe('fuzz: links (URL parameters)', () => {
  it.each(LINK_CASES.map((c) => [c.label, c] as const))(
    '%s',
    (_, c) => {
      const params = new URLSearchParams(c.input);
      expectOutcome(
        c,
        outcome(() => configFromUrlParams(params)),
        expectValid,
      );
      // Read as far as it goes (the page): never throws, keeps a valid config, names the same problems, summarized.
      const kept = configFromUrlParamsKeeping(params);
      expectValid(kept.config);
      if (c.mustName !== null) expect(kept.problems.join('\n'), c.label).toContain(c.mustName);
      const summary = summarizeProblems(kept.problems);
      expect(summary.split('\n').length).toBeLessThanOrEqual(6);
      expect(Math.max(0, ...summary.split(/\s+/).map((w) => w.length))).toBeLessThanOrEqual(100);
      // The largest cases (900 unknown fields, each matched against every knob's name) take about 2 s on one core.
    },
    30_000,
  );
});

describe('fuzz: CLI flags', () => {
  it.each(FLAG_CASES.map((c) => [c.label, c] as const))('%s', (_, c) => {
    expectOutcome(
      c,
      outcome(() => configFromFlags(c.input)),
      expectValid,
    );
  });
});

describe('fuzz case counts', () => {
  it('covers every family with several hundred cases', () => {
    expect(JSON_CASES.length + LINK_CASES.length + FLAG_CASES.length).toBeGreaterThan(600);
  });
});
