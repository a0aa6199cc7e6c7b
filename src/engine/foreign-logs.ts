// Other trainers' metric logs as runs: a TRL trainer_state.json, a verl metrics JSONL or an OpenRLHF metrics JSONL
// becomes a RunData whose metric names are the lab's, mapped through the metric catalog's trl/verl/openrlhf names
// (src/schema/metrics.ts; no second table here), so a cluster run overlays a browser run on the same charts.
// Names the catalog lacks stay under their own names and are listed in the header's origin. The format is told
// from the content. Not the lab's own exports (formats.ts reads those; parseRunOrTrainerLog hands them over).

import { DEFAULT_CONFIG } from '../rl/config';
import { METRICS, type MetricSpec } from '../schema/metrics';
import { finish, parseRunFile, RunFileError, FORMAT, MAX_IMPORT_BYTES } from './formats';
import { TRAINER_TITLES, type ForeignTrainer, type MetricRow, type RunData, type RunHeader } from './types';

export { TRAINER_TITLES } from './types';

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
 * TRL's Trainer ends log_history with a summary of the whole run (train_runtime, train_loss, total_flos,
 * train_samples_per_second, ...) at the last step: not a step's measurement, so it is not drawn.
 */
const TRL_SUMMARY_KEY = 'train_runtime';

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

/** One row per step, the entries of a step merged (TRL logs a step's training and evaluation entries apart). */
function rowsOf(
  file: string,
  trainer: ForeignTrainer,
  entries: { where: string; entry: Entry }[],
): { rows: MetricRow[]; uncatalogued: string[] } {
  const byStep = new Map<number, Record<string, number>>();
  const uncatalogued = new Set<string>();
  entries.forEach(({ where, entry }, i) => {
    const step = entryStep(file, where, entry, i + 1);
    const metrics = byStep.get(step) ?? (Object.create(null) as Record<string, number>);
    for (const [k, v] of Object.entries(entry)) {
      if (POSITION_KEYS.has(k)) continue;
      const value = metricValue(v);
      if (value === undefined) continue;
      const lab = labMetricName(trainer, k);
      if (lab === undefined) uncatalogued.add(k);
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
  return { rows, uncatalogued: [...uncatalogued].sort() };
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
      v = JSON.parse(line);
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
    const v: unknown = JSON.parse(text.split(/\r?\n/, 1)[0]);
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
    whole = JSON.parse(start);
  } catch {
    whole = undefined;
  }
  if (isObj(whole) && Array.isArray(whole.log_history)) {
    const entries = whole.log_history.map((e, i) => {
      if (!isObj(e)) throw new RunFileError(`${file}: log_history[${i}] must be an object`);
      return { where: `log_history[${i}]`, entry: e };
    });
    return { trainer: 'trl', entries: entries.filter(({ entry }) => !Object.hasOwn(entry, TRL_SUMMARY_KEY)) };
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
  const { rows, uncatalogued } = rowsOf(file, trainer, entries);
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
    origin: { trainer, file, uncatalogued },
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
