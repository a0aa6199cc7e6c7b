// Export and import formats of a run, readable by the Python world: metrics as CSV (pandas:
// `read_csv(path, comment='#')`, columns in the metric catalog's order) and JSONL, sampled rollouts as JSONL with
// every token plane. A metrics JSONL step line carries its rollout step's histograms (entropy, advantage; bins of
// src/schema/histograms.ts) where the run recorded them; the CSV carries them as `# histograms {...}` comment lines
// after its rows, as it does the evaluations. The first line of each file describes the run (config, preset, ...), so an exported file
// imports back as the same run; files written before a metric was renamed import under its current name. The CSV
// carries the evaluations as `# eval {...}` comment lines after the rows (pandas skips them; this reader reads them).
// Other trainers' logs (TRL, verl, OpenRLHF) are read by foreign-logs.ts, not here.
// Parsing never throws anything but RunFileError, whose message names the file, the line and what was wrong.
// Pure text in and out; reading and writing files is the caller's (the page downloads, the worker stores).

import { checkConfig, isPresetName, type RLConfig } from '../schema/config';
import type {
  CompletionRecord,
  CompletionSummary,
  EvalRecord,
  GroupRecord,
  GroupSummary,
  TokenRecords,
} from '../schema/stream';
import { HISTOGRAMS, type HistogramId, type StepHistograms } from '../schema/histograms';
import { currentMetricName, orderMetricNames } from '../schema/metrics';
import { withUpdateIndex } from '../schema/metric-batch';
import type { ForeignTrainer, MetricRow, RunData, RunHeader, RunOrigin, RunStatus } from '../schema/run-types';
import { maxOf } from '../schema/extremes';
import { clipText, quote } from '../schema/fields';
import { splitCsvLine } from '../core/csv';

/** A file that is not a readable RL Lab export; the message says where and why. */
export class RunFileError extends Error {
  override name = 'RunFileError';
}

export const FORMAT = 'rl-lab-run';
export const FORMAT_VERSION = 1;

/** Largest file the importer reads. */
export const MAX_IMPORT_BYTES = 256 * 2 ** 20;

const RUN_STATUSES: readonly RunStatus[] = [
  'loading',
  'running',
  'pausing',
  'paused',
  'done',
  'interrupted',
  'failed',
  'imported',
];

// ---------------------------------------------------------------------------------------------------------
// Header line

interface HeaderJson {
  type: 'run';
  format: typeof FORMAT;
  version: number;
  id: string;
  name: string;
  created_at: number;
  preset: string | null;
  backend: string;
  status: string;
  step: number;
  elapsed_ms: number;
  adapter: string;
  config: RLConfig;
  /** Runs imported from another trainer's log (absent otherwise). */
  origin?: RunOrigin;
}

const FOREIGN_TRAINERS: readonly ForeignTrainer[] = ['trl', 'verl', 'openrlhf'];

function headerJson(h: RunHeader): HeaderJson {
  return {
    type: 'run',
    format: FORMAT,
    version: FORMAT_VERSION,
    id: h.id,
    name: h.name,
    created_at: h.createdAt,
    preset: h.preset,
    backend: h.backend,
    status: h.status,
    step: h.step,
    elapsed_ms: h.elapsedMs,
    adapter: h.adapter,
    config: h.config,
    ...(h.origin ? { origin: h.origin } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Writing

/** JSON for a number that may be NaN or infinite (JSON has neither): null, "inf", "-inf". */
function num(v: number): number | string | null {
  if (Number.isNaN(v)) return null;
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  return v;
}

function metricsJson(m: Record<string, number>): Record<string, number | string | null> {
  const out: Record<string, number | string | null> = {};
  for (const k of Object.keys(m).sort()) setOwn(out, k, num(m[k]));
  return out;
}

/**
 * Sets `o[k] = v` as an own property even for k = "__proto__" (a metric may be named anything; plain assignment
 * would set the object's prototype instead and drop the metric).
 */
function setOwn<T>(o: Record<string, T>, k: string, v: T): void {
  if (k === '__proto__')
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/** Metric names over the rows in catalog order (src/schema/metrics.ts), then names the catalog lacks, sorted. */
export function metricNames(rows: readonly MetricRow[]): string[] {
  const s = new Set<string>();
  for (const r of rows) for (const k in r.metrics) s.add(k);
  return orderMetricNames(s);
}

/**
 * Metrics under their current names: a former name (the catalog's `formerly`) becomes the current one, its value
 * times the scale (perf/step_ms in ms -> step_time in s). A current name present in the same row wins.
 */
function renameFormerMetrics(metrics: Record<string, number>): Record<string, number> {
  // Own-property checks: a metric named constructor or __proto__ is a metric like any other.
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(metrics)) {
    const { name, scale } = currentMetricName(k);
    if (name === k) setOwn(out, k, v);
    else if (!Object.hasOwn(metrics, name) && !Object.hasOwn(out, name)) setOwn(out, name, v * scale);
  }
  return out;
}

function csvCell(v: string): string {
  return /[",\n\r#]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

function csvNumber(v: number | undefined): string {
  if (v === undefined) return '';
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  return String(v);
}

/** The CSV's leading columns, before the metrics; `update` and `updates` are absent from older files. */
const CSV_INDEX = ['step', 'optimizer_step', 'epoch', 'minibatch'] as const;
const CSV_UPDATE = ['update', 'updates'] as const;

/** The prefix of the CSV's evaluation lines: a comment to pandas (`comment='#'`) and to readers older than them. */
const CSV_EVAL = '# eval ';
/** The prefix of the CSV's histogram lines (one per row that carries histograms), a comment likewise. */
const CSV_HIST = '# histograms ';

/** One evaluation as the JSONL `eval` line and the CSV `# eval` line write it. */
function evalJson(e: EvalRecord) {
  const rank1 = e.rank1 ? { rank1_accuracy: num(e.rank1.accuracy), rank1_reward: num(e.rank1.reward) } : {};
  return {
    type: 'eval',
    step: e.step,
    items: e.items,
    accuracy: num(e.accuracy),
    reward: num(e.reward),
    pass_at_k: e.passAtK.map(num),
    ...(e.solvedBy && { solved_by: e.solvedBy }),
    ...rank1,
  };
}

/**
 * Metrics as CSV: a `# rl-lab-run {...}` comment line, a header row, one row per optimizer step, then one
 * `# eval {...}` line per evaluation (the JSONL's eval line), so a run imported from its CSV keeps its pass@k curve.
 */
export function metricsToCsv(header: RunHeader, rows: readonly MetricRow[], evals: readonly EvalRecord[] = []): string {
  const names = metricNames(rows);
  const lines = [
    `# ${FORMAT} ${JSON.stringify(headerJson(header))}`,
    [...CSV_INDEX, ...CSV_UPDATE, ...names].map(csvCell).join(','),
  ];
  for (const r of withUpdateIndex(rows)) {
    lines.push(
      [r.step, r.optimizerStep, r.epoch, r.minibatch, r.update, r.updates]
        .map(String)
        .concat(names.map((n) => csvNumber(r.metrics[n])))
        .join(','),
    );
  }
  for (const r of rows)
    if (r.histograms)
      lines.push(
        CSV_HIST + JSON.stringify({ type: 'histograms', optimizer_step: r.optimizerStep, histograms: r.histograms }),
      );
  for (const e of evals) lines.push(CSV_EVAL + JSON.stringify(evalJson(e)));
  return lines.join('\n') + '\n';
}

/** Metrics and evaluations as JSONL: the run line, then one `step` line per optimizer step and one `eval` line per evaluation. */
export function metricsToJsonl(header: RunHeader, rows: readonly MetricRow[], evals: readonly EvalRecord[]): string {
  const lines = [JSON.stringify(headerJson(header))];
  for (const r of withUpdateIndex(rows)) {
    lines.push(
      JSON.stringify({
        type: 'step',
        step: r.step,
        optimizer_step: r.optimizerStep,
        epoch: r.epoch,
        minibatch: r.minibatch,
        update: r.update,
        updates: r.updates,
        metrics: metricsJson(r.metrics),
        ...(r.histograms && { histograms: r.histograms }),
      }),
    );
  }
  for (const e of evals) lines.push(JSON.stringify(evalJson(e)));
  return lines.join('\n') + '\n';
}

/** Token planes: JSON names (snake_case, as a Python reader expects) and constructors. */
const PLANES = {
  tokens: ['tokens', Uint32Array],
  logpOld: ['logp_old', Float32Array],
  logp: ['logp', Float32Array],
  logpSampler: ['logp_sampler', Float32Array],
  entropy: ['entropy', Float32Array],
  ratio: ['ratio', Float32Array],
  advantage: ['advantage', Float32Array],
  clipSide: ['clip_side', Int8Array],
  kl: ['kl', Float32Array],
  loss: ['loss', Float32Array],
  weight: ['weight', Float32Array],
  value: ['value', Float32Array],
} as const satisfies Record<keyof TokenRecords, readonly [string, unknown]>;

/**
 * Sampled groups as JSONL: the run line, then per step a `batch` line with every group in brief (where recorded) and
 * one `group` line per sampled group with its completions and every token plane.
 */
export function rolloutsToJsonl(
  header: RunHeader,
  rollouts: readonly { step: number; groups: readonly GroupRecord[]; batch?: readonly GroupSummary[] }[],
): string {
  const lines = [JSON.stringify(headerJson(header))];
  for (const { step, groups, batch } of rollouts) {
    // Every group of the step in brief, before its sampled groups' token planes.
    if (batch)
      lines.push(
        JSON.stringify({
          type: 'batch',
          step,
          groups: batch.map((g) => ({
            ...g,
            completions: g.completions.map((c) => ({ ...c, reward: num(c.reward), advantage: num(c.advantage) })),
          })),
        }),
      );
    for (const g of groups) {
      lines.push(
        JSON.stringify({
          type: 'group',
          step,
          index: g.index,
          prompt: g.prompt,
          answer: g.answer,
          completions: g.completions.map((c) => ({
            text: c.text,
            length: c.length,
            finished: c.finished,
            reward: num(c.reward),
            rewards: metricsJson(c.rewards),
            reason: c.reason,
            masked: c.masked,
            tokens: Object.fromEntries(
              (Object.keys(PLANES) as (keyof TokenRecords)[]).map((k) => [
                PLANES[k][0],
                Array.from(c.tokens[k] as ArrayLike<number>, num),
              ]),
            ),
          })),
        }),
      );
    }
  }
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------------------
// Reading

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

class At {
  constructor(
    readonly file: string,
    readonly line: number,
  ) {}
  fail(what: string): never {
    throw new RunFileError(`${this.file}: line ${this.line}: ${what}`);
  }
}

function isObj(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A number field: JSON numbers, null (NaN) and the strings "inf", "-inf", "nan". */
function readNum(at: At, v: unknown, what: string): number {
  if (typeof v === 'number') return v;
  if (v === null) return NaN;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'inf' || s === 'infinity' || s === '+inf') return Infinity;
    if (s === '-inf' || s === '-infinity') return -Infinity;
    if (s === 'nan') return NaN;
  }
  return at.fail(`${what} must be a number, got ${clipText(JSON.stringify(v) ?? String(v))}`);
}

function readInt(at: At, v: unknown, what: string, min = 0): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min)
    at.fail(`${what} must be a whole number >= ${min}, got ${JSON.stringify(v)}`);
  return v as number;
}

function readStr(at: At, v: unknown, what: string): string {
  if (typeof v !== 'string') at.fail(`${what} must be a string, got ${JSON.stringify(v)}`);
  return v as string;
}

function readMetrics(at: At, v: unknown, what: string): Record<string, number> {
  if (!isObj(v)) at.fail(`${what} must be an object of name -> number`);
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(v as Record<string, Json>)) setOwn(out, k, readNum(at, x, `${what}.${k}`));
  return out;
}

function readHeader(at: At, v: unknown): RunHeader {
  if (!isObj(v) || v.type !== 'run' || v.format !== FORMAT) {
    at.fail(
      `not an RL Lab run export: the first line must be the run line {"type":"run","format":"${FORMAT}",...} (export a run from the runs list to get one)`,
    );
  }
  const h = v as unknown as HeaderJson;
  if (typeof h.version !== 'number' || h.version > FORMAT_VERSION)
    at.fail(`format version ${JSON.stringify(h.version)} is newer than this lab reads (${FORMAT_VERSION})`);
  if (!isObj(h.config)) at.fail('the run line has no config object');
  const check = checkConfig(h.config as unknown as Record<string, unknown>);
  if (check.errors.length) at.fail(`the run's config is not valid here: ${check.errors.join('; ')}`);
  const preset = h.preset === null || h.preset === undefined ? null : readStr(at, h.preset, 'preset');
  if (preset !== null && !isPresetName(preset)) at.fail(`unknown preset ${JSON.stringify(preset)}`);
  const status = RUN_STATUSES.includes(h.status as RunStatus) ? (h.status as RunStatus) : 'imported';
  const created = typeof h.created_at === 'number' && Number.isFinite(h.created_at) ? h.created_at : Date.now();
  return {
    id: typeof h.id === 'string' && h.id ? h.id : 'imported',
    name: typeof h.name === 'string' && h.name ? h.name : 'imported run',
    createdAt: created,
    updatedAt: created,
    config: { ...(h.config as RLConfig) },
    preset: preset as RunHeader['preset'],
    backend: h.backend === 'cpu' ? 'cpu' : 'webgpu',
    status,
    step: typeof h.step === 'number' && Number.isFinite(h.step) ? h.step : 0,
    savedStep: 0,
    elapsedMs: typeof h.elapsed_ms === 'number' && Number.isFinite(h.elapsed_ms) ? h.elapsed_ms : 0,
    adapter: typeof h.adapter === 'string' ? h.adapter : '',
    lastMetrics: {},
    ...(h.origin === undefined ? {} : { origin: readOrigin(at, h.origin) }),
  };
}

function readOrigin(at: At, v: unknown): RunOrigin {
  if (!isObj(v)) at.fail('origin must be an object {trainer, file, uncatalogued}');
  const o = v as Record<string, Json>;
  if (!FOREIGN_TRAINERS.includes(o.trainer as ForeignTrainer))
    at.fail(`origin.trainer must be one of ${FOREIGN_TRAINERS.join(', ')}, got ${JSON.stringify(o.trainer)}`);
  const uncatalogued = o.uncatalogued ?? [];
  if (!Array.isArray(uncatalogued)) at.fail('origin.uncatalogued must be an array of metric names');
  if (o.summary !== undefined && !isObj(o.summary)) at.fail('origin.summary must be an object {name: number}');
  const summary = o.summary as Record<string, Json> | undefined;
  return {
    trainer: o.trainer as ForeignTrainer,
    file: readStr(at, o.file, 'origin.file'),
    uncatalogued: (uncatalogued as Json[]).map((n, i) => readStr(at, n, `origin.uncatalogued[${i}]`)),
    ...(summary && {
      summary: Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, readNum(at, v, `origin.summary.${k}`)])),
    }),
  };
}

/** One `eval` line (JSONL) or `# eval` line (CSV). */
function readEval(at: At, o: Record<string, Json>): EvalRecord {
  if (!Array.isArray(o.pass_at_k)) at.fail('pass_at_k must be an array of numbers');
  return {
    step: readInt(at, o.step, 'step'),
    items: readInt(at, o.items ?? 0, 'items'),
    accuracy: readNum(at, o.accuracy, 'accuracy'),
    reward: readNum(at, o.reward ?? null, 'reward'),
    passAtK: (o.pass_at_k as Json[]).map((x, k) => readNum(at, x, `pass_at_k[${k}]`)),
    ...(o.solved_by !== undefined && { solvedBy: readCounts(at, o.solved_by, 'solved_by') }),
    ...(o.rank1_accuracy !== undefined
      ? {
          rank1: {
            accuracy: readNum(at, o.rank1_accuracy, 'rank1_accuracy'),
            reward: readNum(at, o.rank1_reward ?? null, 'rank1_reward'),
          },
        }
      : {}),
  };
}

/** An array of whole-number counts (a histogram's bins). */
function readCounts(at: At, v: unknown, what: string): number[] {
  if (!Array.isArray(v)) at.fail(`${what} must be an array of counts`);
  return (v as Json[]).map((x, i) => readInt(at, x, `${what}[${i}]`));
}

/** A step line's histograms: known ids only, each with one count per bin of its edges. */
function readHistograms(at: At, v: unknown): StepHistograms {
  if (!isObj(v)) at.fail('histograms must be an object of histogram id -> counts');
  const out: StepHistograms = {};
  for (const [id, counts] of Object.entries(v as Record<string, Json>)) {
    if (!Object.hasOwn(HISTOGRAMS, id))
      at.fail(`histograms.${id}: not a histogram this lab records (${Object.keys(HISTOGRAMS).join(', ')})`);
    const bins = HISTOGRAMS[id as HistogramId].edges.length - 1;
    const c = readCounts(at, counts, `histograms.${id}`);
    if (c.length !== bins) at.fail(`histograms.${id} has ${c.length} bins, want ${bins}`);
    out[id as HistogramId] = c;
  }
  return out;
}

function readCompletion(at: At, v: unknown, what: string): CompletionRecord {
  if (!isObj(v)) at.fail(`${what} must be an object`);
  const c = v as Record<string, Json>;
  const length = readInt(at, c.length, `${what}.length`);
  if (!isObj(c.tokens)) at.fail(`${what}.tokens must be an object of token planes`);
  const t = c.tokens as Record<string, Json>;
  const tokens = {} as Record<keyof TokenRecords, Float32Array | Uint32Array | Int8Array>;
  for (const k of Object.keys(PLANES) as (keyof TokenRecords)[]) {
    const [name, Ctor] = PLANES[k];
    const arr = t[name] ?? [];
    if (!Array.isArray(arr)) at.fail(`${what}.tokens.${name} must be an array`);
    const plane = new Ctor((arr as Json[]).length);
    (arr as Json[]).forEach((x, i) => (plane[i] = readNum(at, x, `${what}.tokens.${name}[${i}]`)));
    if (k !== 'value' && plane.length !== length)
      at.fail(`${what}.tokens.${name} has ${plane.length} entries, want length ${length}`);
    tokens[k] = plane;
  }
  return {
    text: readStr(at, c.text, `${what}.text`),
    length,
    finished: c.finished === true,
    reward: readNum(at, c.reward, `${what}.reward`),
    rewards: c.rewards === undefined ? {} : readMetrics(at, c.rewards, `${what}.rewards`),
    reason: typeof c.reason === 'string' ? c.reason : '',
    masked: c.masked === true,
    tokens: tokens as unknown as TokenRecords,
  };
}

/** One group of a `batch` line: its prompt and each completion in brief. */
function readGroupSummary(at: At, v: unknown, what: string): GroupSummary {
  if (!isObj(v)) at.fail(`${what} must be an object`);
  const g = v as Record<string, Json>;
  if (!Array.isArray(g.completions)) at.fail(`${what}.completions must be an array`);
  const completions = (g.completions as Json[]).map((cv, j): CompletionSummary => {
    const w = `${what}.completions[${j}]`;
    if (!isObj(cv)) at.fail(`${w} must be an object`);
    const c = cv as Record<string, Json>;
    return {
      text: readStr(at, c.text, `${w}.text`),
      length: readInt(at, c.length, `${w}.length`),
      finished: c.finished === true,
      reward: readNum(at, c.reward, `${w}.reward`),
      passed: c.passed === true,
      advantage: readNum(at, c.advantage, `${w}.advantage`),
      masked: c.masked === true,
    };
  });
  return {
    index: readInt(at, g.index ?? 0, `${what}.index`),
    prompt: readStr(at, g.prompt, `${what}.prompt`),
    answer: typeof g.answer === 'string' ? g.answer : '',
    completions,
  };
}

function parseJsonl(file: string, text: string): RunData {
  const lines = text.split(/\r?\n/);
  let header: RunHeader | null = null;
  const rows: MetricRow[] = [];
  const evals: EvalRecord[] = [];
  const rollouts = new Map<number, GroupRecord[]>();
  const batches = new Map<number, GroupSummary[]>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const at = new At(file, i + 1);
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      at.fail(`not valid JSON (${e instanceof Error ? e.message : String(e)})`);
    }
    if (!header) {
      header = readHeader(at, v);
      continue;
    }
    if (!isObj(v)) at.fail('each line must be a JSON object');
    const o = v as Record<string, Json>;
    switch (o.type) {
      case 'step': {
        const row: MetricRow = {
          step: readInt(at, o.step, 'step', 1),
          optimizerStep: readInt(at, o.optimizer_step, 'optimizer_step', 1),
          epoch: readInt(at, o.epoch ?? 0, 'epoch'),
          minibatch: readInt(at, o.minibatch ?? 0, 'minibatch'),
          metrics: renameFormerMetrics(readMetrics(at, o.metrics, 'metrics')),
        };
        if (o.update !== undefined) row.update = readInt(at, o.update, 'update');
        if (o.updates !== undefined) row.updates = readInt(at, o.updates, 'updates', 1);
        if (o.histograms !== undefined) row.histograms = readHistograms(at, o.histograms);
        rows.push(row);
        break;
      }
      case 'eval':
        evals.push(readEval(at, o));
        break;
      case 'group': {
        const step = readInt(at, o.step, 'step', 1);
        if (!Array.isArray(o.completions)) at.fail('completions must be an array');
        const g: GroupRecord = {
          index: readInt(at, o.index ?? 0, 'index'),
          prompt: readStr(at, o.prompt, 'prompt'),
          answer: typeof o.answer === 'string' ? o.answer : '',
          completions: (o.completions as Json[]).map((c, j) => readCompletion(at, c, `completions[${j}]`)),
        };
        const list = rollouts.get(step) ?? [];
        list.push(g);
        rollouts.set(step, list);
        break;
      }
      case 'batch': {
        const step = readInt(at, o.step, 'step', 1);
        if (!Array.isArray(o.groups)) at.fail('groups must be an array');
        batches.set(
          step,
          (o.groups as Json[]).map((g, j) => readGroupSummary(at, g, `groups[${j}]`)),
        );
        break;
      }
      case 'run':
        at.fail('a second run line: one file holds one run');
        break;
      default:
        at.fail(`unknown line type ${JSON.stringify(o.type)} (expected step, eval, batch or group)`);
    }
  }
  if (!header) throw new RunFileError(`${file}: the file is empty`);
  const steps = [...new Set([...rollouts.keys(), ...batches.keys()])].sort((a, b) => a - b);
  return finish(
    file,
    header,
    rows,
    evals,
    steps.map((step) => ({
      step,
      groups: rollouts.get(step) ?? [],
      ...(batches.has(step) && { batch: batches.get(step)! }),
    })),
  );
}

function parseCsvNumber(at: At, s: string, what: string): number | undefined {
  const t = s.trim();
  if (t === '') return undefined;
  const lower = t.toLowerCase();
  if (lower === 'nan') return NaN;
  if (lower === 'inf' || lower === 'infinity' || lower === '+inf') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  const v = Number(t);
  if (!Number.isFinite(v)) at.fail(`${what}: ${JSON.stringify(s)} is not a number`);
  return v;
}

function parseCsv(file: string, text: string): RunData {
  const lines = text.split(/\r?\n/);
  const first = lines[0] ?? '';
  const prefix = `# ${FORMAT} `;
  if (!first.startsWith(prefix)) {
    new At(file, 1).fail(
      `not an RL Lab metrics CSV: the first line must be "${prefix}{...}" describing the run (export a run from the runs list to get one)`,
    );
  }
  let headerValue: unknown;
  try {
    headerValue = JSON.parse(first.slice(prefix.length));
  } catch (e) {
    new At(file, 1).fail(`the run description is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const header = readHeader(new At(file, 1), headerValue);
  const cols = splitCsvLine(lines[1] ?? '') ?? [];
  if (CSV_INDEX.some((w, i) => cols[i] !== w))
    new At(file, 2).fail(`the header row must start with ${CSV_INDEX.join(',')}, got ${quote(lines[1] ?? '')}`);
  // update,updates follow in files written since the trainer records them.
  const hasUpdate = CSV_UPDATE.every((w, i) => cols[CSV_INDEX.length + i] === w);
  const leading = CSV_INDEX.length + (hasUpdate ? CSV_UPDATE.length : 0);
  // The smallest value of each leading column: step and optimizer_step count from 1, updates too.
  const least = [1, 1, 0, 0, 0, 1];
  const rows: MetricRow[] = [];
  const evals: EvalRecord[] = [];
  const histograms: { at: At; optimizerStep: number; histograms: StepHistograms }[] = [];
  for (let i = 2; i < lines.length; i++) {
    if (!lines[i].trim()) continue;
    const at = new At(file, i + 1);
    if (lines[i].startsWith(CSV_HIST)) {
      let v: unknown;
      try {
        v = JSON.parse(lines[i].slice(CSV_HIST.length));
      } catch (e) {
        at.fail(`the histograms are not valid JSON (${e instanceof Error ? e.message : String(e)})`);
      }
      if (!isObj(v) || v.type !== 'histograms')
        at.fail('a histograms line must be "# histograms {"type":"histograms",...}"');
      const o = v as Record<string, Json>;
      histograms.push({
        at,
        optimizerStep: readInt(at, o.optimizer_step, 'optimizer_step', 1),
        histograms: readHistograms(at, o.histograms),
      });
      continue;
    }
    if (lines[i].startsWith(CSV_EVAL)) {
      let v: unknown;
      try {
        v = JSON.parse(lines[i].slice(CSV_EVAL.length));
      } catch (e) {
        at.fail(`the evaluation is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
      }
      if (!isObj(v) || v.type !== 'eval') at.fail('an evaluation line must be "# eval {"type":"eval",...}"');
      evals.push(readEval(at, v as Record<string, Json>));
      continue;
    }
    const cells = splitCsvLine(lines[i]) ?? at.fail('a quoted cell is never closed (a " with no closing ")');
    if (cells.length !== cols.length) at.fail(`${cells.length} cells, but the header has ${cols.length} columns`);
    const ints = cells.slice(0, leading).map((c, j) => {
      const v = Number(c);
      if (!Number.isInteger(v) || v < least[j])
        at.fail(`${cols[j]} must be a whole number${least[j] ? ` >= ${least[j]}` : ''}, got ${quote(c)}`);
      return v;
    });
    const metrics: Record<string, number> = {};
    for (let j = leading; j < cols.length; j++) {
      const v = parseCsvNumber(at, cells[j], cols[j]);
      if (v !== undefined) metrics[cols[j]] = v;
    }
    const row: MetricRow = {
      step: ints[0],
      optimizerStep: ints[1],
      epoch: ints[2],
      minibatch: ints[3],
      metrics: renameFormerMetrics(metrics),
    };
    if (hasUpdate) [row.update, row.updates] = [ints[4], ints[5]];
    rows.push(row);
  }
  const byOptimizerStep = new Map(rows.map((r) => [r.optimizerStep, r]));
  for (const h of histograms) {
    const row = byOptimizerStep.get(h.optimizerStep);
    if (!row) h.at.fail(`histograms of optimizer_step ${h.optimizerStep}, which has no row`);
    row.histograms = h.histograms;
  }
  return finish(file, header, rows, evals, []);
}

/** The RunData of a file's header and records: rows in optimizer-step order, the header's step and last metrics. */
export function finish(
  file: string,
  header: RunHeader,
  parsed: MetricRow[],
  evals: EvalRecord[],
  rollouts: RunData['rollouts'],
): RunData {
  if (!parsed.length && !evals.length && !rollouts.length)
    throw new RunFileError(`${file}: the run line is there but no step, eval or group lines follow`);
  const rows = withUpdateIndex(parsed.sort((a, b) => a.optimizerStep - b.optimizerStep));
  const steps = Math.max(
    maxOf(
      rows.map((r) => r.step),
      0,
    ),
    maxOf(
      rollouts.map((r) => r.step),
      0,
    ),
    maxOf(
      evals.map((e) => e.step),
      0,
    ),
  );
  return {
    header: {
      ...header,
      step: steps,
      lastMetrics: rows.length ? rows[rows.length - 1].metrics : {},
      importedFrom: file,
    },
    rows,
    evals: evals.sort((a, b) => a.step - b.step),
    rollouts,
  };
}

/**
 * Reads an exported run: metrics CSV, metrics JSONL or rollouts JSONL (recognized by content, not by name).
 * Throws RunFileError with the file name, the line and the problem.
 */
export function parseRunFile(file: string, text: string): RunData {
  if (text.length > MAX_IMPORT_BYTES)
    throw new RunFileError(
      `${file}: ${(text.length / 2 ** 20).toFixed(0)} MiB is more than the ${MAX_IMPORT_BYTES / 2 ** 20} MiB the importer reads`,
    );
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (!start) throw new RunFileError(`${file}: the file is empty`);
  if (start.startsWith('#')) return parseCsv(file, start);
  if (start.startsWith('{')) return parseJsonl(file, start);
  throw new RunFileError(
    `${file}: line 1: not an RL Lab export (expected a metrics CSV starting with "# ${FORMAT}" or a JSONL file starting with a run line)`,
  );
}
