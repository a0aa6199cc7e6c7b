// Other trainers' metric logs as runs: a TRL trainer_state.json, a verl metrics JSONL or an OpenRLHF metrics JSONL
// becomes a RunData whose metric names are the lab's, mapped through the metric catalog's trl/verl/openrlhf names
// (src/schema/metrics.ts; no second table here), so a cluster run overlays a browser run on the same charts.
// Names the catalog lacks stay under their own names and are listed in the header's origin. The format is told
// from the content. Not the lab's own exports (formats.ts reads those; parseRunOrTrainerLog hands them over).
// Python writes NaN, Infinity and -Infinity bare (json.dumps): parsePythonJson reads that dialect, and a value
// that is not finite is kept so and named in the header (origin.nonFinite). A log may carry thousands of names the
// catalog lacks: at most MAX_CHARTED_UNCATALOGUED of them go to the page's charts (chartedRows), the rest are
// counted and listed in origin.uncharted for the person to pick from.

import { DEFAULT_CONFIG } from '../schema/config';
import { METRICS, metricSpec, type MetricSpec } from '../schema/metrics';
import { finish, parseRunFile, RunFileError, FORMAT, MAX_IMPORT_BYTES } from './run-files';
import {
  TRAINER_TITLES,
  type ForeignTrainer,
  type MetricRow,
  type RunData,
  type RunHeader,
  type RunOrigin,
} from '../schema/run-types';

export { TRAINER_TITLES } from '../schema/run-types';

/**
 * Prefixes a trainer's names may carry in a log besides the catalog's: TRL's and OpenRLHF's W&B logging writes
 * `train/reward`, OpenRLHF's evaluation `eval/...`; verl's names are the catalog's as they are.
 */
const PREFIXES: Readonly<Record<ForeignTrainer, readonly string[]>> = {
  trl: ['train/'],
  verl: [],
  openrlhf: ['train/'],
};

/**
 * Keys that say where an entry is, not what was measured. TRL: `step` (global_step, optimizer steps) and `epoch`
 * (a fraction of the dataset, not the lab's PPO epoch). verl: the `step` of the file logger's line and
 * `training/global_step`. OpenRLHF: `global_step` (also `train/global_step` under W&B).
 */
const STEP_KEYS = ['step', 'global_step', 'train/global_step', 'training/global_step'] as const;
const POSITION_KEYS = new Set<string>([...STEP_KEYS, 'epoch', 'training/epoch']);

/**
 * TRL's Trainer ends log_history with a summary of the whole run at the last step (transformers' Trainer
 * _inner_training_loop: speed_metrics('train', ...) gives train_runtime, train_samples_per_second,
 * train_steps_per_second and train_tokens_per_second, then total_flos and train_loss, and the memory tracker's
 * train_mem_* / init_mem_* when skip_memory_metrics is off). The entry holding train_runtime is that summary. Its
 * summary keys are not a step's measurement: they become the run's summary (origin.summary), never a row. TRL's
 * GRPOTrainer.log (huggingface/trl f2cd577) adds to it the step metrics logged since the last entry (a run shorter
 * than logging_steps, or max_steps not a multiple of it), averaged: those are a row at the entry's step.
 */
const TRL_SUMMARY_KEY = 'train_runtime';
const TRL_SUMMARY_NAME = /^(?:train_|total_flos$|(?:before_)?init_mem_)/;

/** The summary keys of TRL's end-of-run entry, and the entry without them (its step metrics, if any). */
function splitTrlSummary(entry: Entry): { summary: Entry; rest: Entry } | null {
  if (!Object.hasOwn(entry, TRL_SUMMARY_KEY)) return null;
  const summary: Entry = {};
  const rest: Entry = {};
  for (const [k, v] of Object.entries(entry)) (TRL_SUMMARY_NAME.test(k) ? summary : rest)[k] = v;
  return { summary, rest };
}

interface NameMap {
  exact: Map<string, string>;
  /** Templated names (`rewards/<fn>/mean`): the foreign pattern and the lab name its segments fill in. */
  templates: { pattern: RegExp; lab: string }[];
}

function templatePattern(name: string): RegExp {
  const parts = name.split(/<[^>]+>/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('([^/]+)')}$`);
}

const NAME_MAPS = new Map<ForeignTrainer, NameMap>();

/** A trainer's names -> the lab's, read off the catalog once (the first catalog entry naming a foreign name wins). */
function nameMap(trainer: ForeignTrainer): NameMap {
  let map = NAME_MAPS.get(trainer);
  if (map) return map;
  map = { exact: new Map(), templates: [] };
  for (const m of METRICS as readonly MetricSpec[]) {
    const foreign = m[trainer];
    if (!foreign) continue;
    if (foreign.includes('<')) map.templates.push({ pattern: templatePattern(foreign), lab: m.name });
    else if (!map.exact.has(foreign)) map.exact.set(foreign, m.name);
  }
  NAME_MAPS.set(trainer, map);
  return map;
}

/** The lab's name of a trainer's metric, or undefined where the catalog has no entry for it. */
export function labMetricName(trainer: ForeignTrainer, name: string): string | undefined {
  const map = nameMap(trainer);
  for (const candidate of [
    name,
    ...PREFIXES[trainer].filter((p) => name.startsWith(p)).map((p) => name.slice(p.length)),
  ]) {
    const exact = map.exact.get(candidate);
    if (exact) return exact;
    for (const t of map.templates) {
      const m = t.pattern.exec(candidate);
      // The template's placeholders fill in order: rewards/<fn>/mean with fn = the matched segment.
      if (m) {
        let i = 1;
        return t.lab.replace(/<[^>]+>/g, () => m[i++]);
      }
    }
  }
  return undefined;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Entry = Record<string, Json>;

function isObj(v: unknown): v is Entry {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Stand-ins for Python's bare non-finite numbers, each a one-character JSON string padded with spaces to the
 * token's length, so a rewritten text keeps every character's position (an error names the file's position).
 * Noncharacters (U+FDD0..U+FDD2) never occur in a log; a text holding one is not rewritten.
 */
const NON_FINITE_TOKENS: readonly { token: string; standIn: string; value: number }[] = [
  { token: 'NaN', standIn: '"\uFDD0"', value: NaN },
  { token: 'Infinity', standIn: '"\uFDD1"     ', value: Infinity },
  { token: '-Infinity', standIn: '"\uFDD2"      ', value: -Infinity },
];
const STAND_IN_VALUES = new Map(NON_FINITE_TOKENS.map((t) => [t.standIn.trim().slice(1, -1), t.value]));
const HOLDS_STAND_IN = /[\uFDD0-\uFDD2]|\\u[fF][dD][dD][0-2]/;

/** A character that continues a bare word (NaNa, Infinity2 are not Python's tokens). */
function wordChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_$.]/.test(c);
}

/**
 * `text` with Python's bare NaN, Infinity and -Infinity outside strings replaced by their stand-ins, or null when
 * it holds none (or holds a stand-in already). A scan, not a regular expression: text inside strings is never
 * touched, and nothing is evaluated.
 */
function withStandIns(text: string): string | null {
  if (HOLDS_STAND_IN.test(text)) return null;
  const out: string[] = [];
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      continue;
    }
    if (c !== 'N' && c !== 'I' && c !== '-') continue;
    const t = NON_FINITE_TOKENS.find((k) => text.startsWith(k.token, i));
    if (!t || wordChar(text[i - 1]) || wordChar(text[i + t.token.length])) continue;
    out.push(text.slice(from, i), t.standIn);
    i += t.token.length - 1;
    from = i + 1;
  }
  if (!out.length) return null;
  out.push(text.slice(from));
  return out.join('');
}

/**
 * JSON as Python's json.dumps writes it: standard JSON, plus NaN, Infinity and -Infinity as bare tokens outside
 * strings, read as those numbers. Throws SyntaxError (with the position in `text`) for anything else.
 */
export function parsePythonJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const rewritten = withStandIns(text);
    if (rewritten === null) throw e;
    try {
      return JSON.parse(rewritten, (_key, v: unknown) =>
        typeof v === 'string' && v.length === 1 && STAND_IN_VALUES.has(v) ? STAND_IN_VALUES.get(v) : v,
      );
    } catch (again) {
      // The message quotes the text around the error: the file's, with its tokens back in place.
      const message = NON_FINITE_TOKENS.reduce(
        (m, t) => m.replaceAll(t.standIn, t.token),
        again instanceof Error ? again.message : String(again),
      );
      throw new SyntaxError(message);
    }
  }
}

/** A logged value as a number: JSON numbers, null (NaN) and "nan"/"inf" strings; anything else is not a metric. */
function metricValue(v: Json): number | undefined {
  if (typeof v === 'number') return v;
  if (v === null) return NaN;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'nan') return NaN;
    if (s === 'inf' || s === '+inf' || s === 'infinity') return Infinity;
    if (s === '-inf' || s === '-infinity') return -Infinity;
  }
  return undefined;
}

/** The step an entry is at: its step key, else its place among the entries (1-based). */
function entryStep(file: string, where: string, e: Entry, fallback: number): number {
  for (const k of STEP_KEYS) {
    if (!Object.hasOwn(e, k)) continue;
    const v = e[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      throw new RunFileError(`${file}: ${where}: ${k} must be a whole number >= 0, got ${JSON.stringify(v)}`);
    return v;
  }
  return fallback;
}

/** Most names the catalog lacks that go to the charts; the rest are counted and offered to pick from. */
export const MAX_CHARTED_UNCATALOGUED = 32;
/** Most uncharted names a header lists (the picker's choices); a log may carry a hundred thousand. */
export const MAX_LISTED_UNCHARTED = 1000;
/** Most non-finite values a header names ("step 37: grad_norm is NaN"); the count says how many there are. */
export const MAX_NON_FINITE_NOTES = 20;

/** A non-finite value as Python wrote it. */
function nonFiniteText(v: number): string {
  return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

/** One row per step, the entries of a step merged (TRL logs a step's training and evaluation entries apart). */
function rowsOf(
  file: string,
  trainer: ForeignTrainer,
  entries: { where: string; entry: Entry }[],
): { rows: MetricRow[] } & Pick<RunOrigin, 'uncatalogued' | 'uncharted' | 'nonFinite' | 'summary'> {
  /** TRL's end-of-run summary, under the catalog's names where it has them. */
  const summary: Record<string, number> = Object.create(null) as Record<string, number>;
  const byStep = new Map<number, Record<string, number>>();
  /** Names the catalog lacks, in order of first appearance, with how many entries report them. */
  const uncatalogued = new Map<string, number>();
  /** Each raw name's lab name (undefined: not in the catalog); a log repeats its names on every line. */
  const labNames = new Map<string, string | undefined>();
  const nonFinite: string[] = [];
  let nonFiniteCount = 0;
  entries.forEach(({ where, entry: logged }, i) => {
    const step = entryStep(file, where, logged, i + 1);
    const split = trainer === 'trl' ? splitTrlSummary(logged) : null;
    if (split)
      for (const [k, v] of Object.entries(split.summary)) {
        const value = metricValue(v);
        if (value !== undefined) summary[labMetricName(trainer, k) ?? k] = value;
      }
    const entry = split ? split.rest : logged;
    // An entry with no measurement of its own (TRL's summary alone) makes no row.
    if (split && !Object.entries(entry).some(([k, v]) => !POSITION_KEYS.has(k) && metricValue(v) !== undefined)) return;
    const metrics = byStep.get(step) ?? (Object.create(null) as Record<string, number>);
    for (const [k, v] of Object.entries(entry)) {
      if (POSITION_KEYS.has(k)) continue;
      const value = metricValue(v);
      if (value === undefined) continue;
      if (!Number.isFinite(value) && nonFiniteCount++ < MAX_NON_FINITE_NOTES)
        nonFinite.push(`step ${step}: ${k} is ${nonFiniteText(value)}`);
      let lab = labNames.get(k);
      if (lab === undefined && !labNames.has(k)) {
        lab = labMetricName(trainer, k);
        labNames.set(k, lab);
      }
      if (lab === undefined) uncatalogued.set(k, (uncatalogued.get(k) ?? 0) + 1);
      const name = lab ?? k;
      // A mapped name wins over a raw key of the same name.
      if (lab !== undefined || !Object.hasOwn(metrics, name)) metrics[name] = value;
    }
    byStep.set(step, metrics);
  });
  const rows = [...byStep.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(
      ([step, metrics], i): MetricRow => ({
        step,
        optimizerStep: i + 1,
        update: 0,
        updates: 1,
        epoch: 0,
        minibatch: 0,
        metrics: { ...metrics },
      }),
    );
  // The most reported names are charted first (a stable sort: first appearance breaks ties).
  const ranked = [...uncatalogued.entries()].sort((a, b) => b[1] - a[1]).map(([name]) => name);
  const beyond = ranked.slice(MAX_CHARTED_UNCATALOGUED);
  return {
    rows,
    uncatalogued: ranked.slice(0, MAX_CHARTED_UNCATALOGUED).sort(),
    ...(beyond.length > 0 && { uncharted: { count: beyond.length, names: beyond.slice(0, MAX_LISTED_UNCHARTED) } }),
    ...(nonFiniteCount > 0 && { nonFinite: { count: nonFiniteCount, notes: nonFinite } }),
    ...(Object.keys(summary).length > 0 && { summary: { ...summary } }),
  };
}

/**
 * An imported run's rows as the page's charts get them: the catalog's names, the charted uncatalogued ones
 * (origin.uncatalogued) and the names the person picked; the other names stay in storage (a log with a hundred
 * thousand names would otherwise become a hundred thousand columns on the page).
 */
export function chartedRows(rows: readonly MetricRow[], origin: RunOrigin, picked: readonly string[]): MetricRow[] {
  if (!origin.uncharted) return [...rows];
  const extra = new Set([...origin.uncatalogued, ...picked]);
  const keep = new Map<string, boolean>();
  const kept = (name: string) => {
    let k = keep.get(name);
    if (k === undefined) keep.set(name, (k = extra.has(name) || metricSpec(name) !== undefined));
    return k;
  };
  return rows.map((r) => {
    const metrics: Record<string, number> = {};
    for (const k in r.metrics) if (kept(k)) metrics[k] = r.metrics[k];
    return { ...r, metrics };
  });
}

/** Lines of a JSONL log as objects; a cut last line (the trainer was stopped while writing it) is dropped. */
function jsonlEntries(file: string, text: string): { where: string; entry: Entry }[] {
  const lines = text.split(/\r?\n/);
  const last = lines.findLastIndex((l) => l.trim() !== '');
  const out: { where: string; entry: Entry }[] = [];
  for (let i = 0; i <= last; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    let v: unknown;
    try {
      v = parsePythonJson(line);
    } catch (e) {
      if (i === last && out.length) break;
      throw new RunFileError(`${file}: line ${i + 1}: not valid JSON (${e instanceof Error ? e.message : String(e)})`);
    }
    if (!isObj(v)) throw new RunFileError(`${file}: line ${i + 1}: each line must be a JSON object`);
    out.push({ where: `line ${i + 1}`, entry: v });
  }
  return out;
}

/** The first line as a JSON object, or null. */
function firstLineObject(text: string): Entry | null {
  try {
    const v: unknown = parsePythonJson(text.split(/\r?\n/, 1)[0]);
    return isObj(v) ? v : null;
  } catch {
    return null;
  }
}

/** How many of an entry's keys a trainer's catalog names cover. */
function known(trainer: ForeignTrainer, e: Entry): number {
  return Object.keys(e).filter((k) => labMetricName(trainer, k) !== undefined).length;
}

/** What the importer reads, for the message about a file that is none of it. */
const EXPECTED =
  `expected an RL Lab export (a metrics CSV starting with "# ${FORMAT}" or a JSONL file starting with a run line), ` +
  'a TRL trainer_state.json (an object with a log_history list), a verl metrics JSONL (lines {"step": n, "data": {...}} ' +
  'or flat objects with names such as critic/score/mean) or an OpenRLHF metrics JSONL (flat objects with names such as reward, policy_loss)';

/** The trainer whose log this is, with its entries; null when the text is not one (it may be an RL Lab export). */
export function readTrainerLog(
  file: string,
  text: string,
): { trainer: ForeignTrainer; entries: { where: string; entry: Entry }[] } | null {
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (!start.startsWith('{')) return null;
  // TRL: TrainerState.save_to_json writes one indented object {global_step, epoch, log_history: [{step, epoch, ...}], ...}.
  let whole: unknown;
  try {
    whole = parsePythonJson(start);
  } catch {
    whole = undefined;
  }
  if (isObj(whole) && Array.isArray(whole.log_history)) {
    const entries = whole.log_history.map((e, i) => {
      if (!isObj(e)) throw new RunFileError(`${file}: log_history[${i}] must be an object`);
      return { where: `log_history[${i}]`, entry: e };
    });
    return { trainer: 'trl', entries };
  }
  const first = firstLineObject(start);
  if (!first || first.type === 'run') return null;
  const entries = jsonlEntries(file, start);
  // verl's file logger (verl/utils/tracking.py, backend 'file'): one {"step": n, "data": {name: value}} per line.
  if (isObj(first.data) && typeof first.step === 'number') {
    return {
      trainer: 'verl',
      entries: entries.map(({ where, entry }) => {
        if (!isObj(entry.data))
          throw new RunFileError(`${file}: ${where}: a verl log line must be {"step": n, "data": {...}}`);
        return { where, entry: { ...entry.data, step: entry.step } };
      }),
    };
  }
  // Flat objects: verl's names (actor/..., critic/...) or OpenRLHF's (reward, policy_loss, ...), whichever the
  // catalog recognizes more of in the first line; verl first on a tie, its names being the more specific.
  const verl = known('verl', first);
  const openrlhf = known('openrlhf', first);
  if (verl === 0 && openrlhf === 0) return null;
  return { trainer: verl >= openrlhf ? 'verl' : 'openrlhf', entries };
}

/** A trainer's log as a run: lab-named metrics, the lab's default config (the log carries none), origin in the header. */
export function parseTrainerLog(
  file: string,
  trainer: ForeignTrainer,
  entries: { where: string; entry: Entry }[],
): RunData {
  const { rows, ...names } = rowsOf(file, trainer, entries);
  if (!rows.length) throw new RunFileError(`${file}: a ${TRAINER_TITLES[trainer]} log with no logged steps`);
  const now = Date.now();
  const header: RunHeader = {
    id: 'imported',
    name: `${TRAINER_TITLES[trainer]}: ${file.replace(/\.[^.]*$/, '')}`,
    createdAt: now,
    updatedAt: now,
    config: { ...DEFAULT_CONFIG },
    preset: null,
    backend: 'webgpu',
    status: 'imported',
    step: 0,
    savedStep: 0,
    elapsedMs: 0,
    adapter: '',
    lastMetrics: {},
    origin: { trainer, file, ...names },
  };
  return finish(file, header, rows, [], []);
}

/**
 * Reads an RL Lab export (formats.ts) or a TRL, verl or OpenRLHF metrics log, told apart by content. Throws
 * RunFileError naming the file and what was expected when it is none of them.
 */
export function parseRunOrTrainerLog(file: string, text: string): RunData {
  if (text.length > MAX_IMPORT_BYTES) return parseRunFile(file, text);
  const log = readTrainerLog(file, text);
  if (log) return parseTrainerLog(file, log.trainer, log.entries);
  const start = text.replace(/^\uFEFF/, '').trimStart();
  // The lab's own files: a CSV's comment line, or a JSONL run line (parseRunFile names what is wrong in them).
  if (!start || start.startsWith('#') || firstLineObject(start)?.type === 'run') return parseRunFile(file, text);
  throw new RunFileError(`${file}: line 1: not a run this lab reads: ${EXPECTED}`);
}
