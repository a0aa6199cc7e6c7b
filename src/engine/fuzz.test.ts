// Fuzz cases for run imports (metrics CSV, metrics JSONL, rollouts JSONL): valid exports broken one way at a time,
// seeded and table-driven, no GPU. Each case is refused with RunFileError naming the file, the line and what is
// wrong (never a TypeError or RangeError), or, for edits that leave a valid export, imported as a run.
import { describe, expect, it } from 'vitest';
import { badJsonValues, INHERITED_NAMES, pick } from '../reference/fuzz-inputs';
import { Rng } from '../core/random';
import { FIELD_NAMES, FIELD_SPECS, resolveConfig } from '../schema/config';
import type { GroupRecord } from '../schema/stream';
import { metricsToCsv, metricsToJsonl, parseRunFile, rolloutsToJsonl, RunFileError } from '../io/run-files';
import type { MetricRow, RunHeader } from '../schema/run-types';

const header: RunHeader = {
  id: 'run-1',
  name: 'fuzz',
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000,
  config: resolveConfig('grpo', { task: 'copy' }),
  preset: 'grpo',
  backend: 'webgpu',
  status: 'done',
  step: 3,
  savedStep: 3,
  elapsedMs: 10,
  adapter: '',
  lastMetrics: {},
};
const rows: MetricRow[] = Array.from({ length: 6 }, (_, i) => ({
  step: 1 + (i >> 1),
  optimizerStep: i + 1,
  epoch: 0,
  minibatch: i & 1,
  metrics: { reward: i / 6, entropy: 1 + i, kl: i ? 0.01 * i : NaN },
}));
const evals = [{ step: 2, items: 4, accuracy: 0.5, reward: 0.6, passAtK: [0.5, 0.75] }];
const plane = (n: number) => Float32Array.from({ length: n }, (_, i) => i / 10);
const groups: GroupRecord[] = [
  {
    index: 0,
    prompt: 'copy:ab=',
    answer: 'ab',
    completions: [
      {
        text: 'ab',
        length: 3,
        finished: true,
        reward: 1,
        rewards: { accuracy: 1, format: 1 },
        reason: 'correct',
        masked: false,
        tokens: {
          tokens: Uint32Array.from([5, 6, 2]),
          logpOld: plane(3),
          logp: plane(3),
          logpSampler: plane(3),
          entropy: plane(3),
          ratio: plane(3),
          advantage: plane(3),
          clipSide: Int8Array.from([0, 1, -1]),
          kl: plane(3),
          loss: plane(3),
          weight: plane(3),
          value: new Float32Array(0),
        },
      },
    ],
  },
];

const FILES = {
  'metrics.csv': metricsToCsv(header, rows),
  'metrics.jsonl': metricsToJsonl(header, rows, evals),
  'rollouts.jsonl': rolloutsToJsonl(header, [{ step: 1, groups }]),
} as const;
type FileName = keyof typeof FILES;

interface Case {
  label: string;
  file: FileName;
  text: string;
  /** Text the refusal must contain; null when the edit may leave a valid export. */
  mustName: string | null;
  /** A digit was inserted: it may land inside a number and leave a valid export with one field's value changed. */
  digitInserted?: boolean;
}

/** The export with its run line's JSON edited (the CSV's comment line, or the JSONL's first line). */
function withRunLine(file: FileName, edit: (run: Record<string, unknown>) => void): string {
  const lines = FILES[file].split('\n');
  const csv = file.endsWith('.csv');
  const prefix = '# rl-lab-run ';
  const run = JSON.parse(csv ? lines[0].slice(prefix.length) : lines[0]) as Record<string, unknown>;
  edit(run);
  lines[0] = (csv ? prefix : '') + JSON.stringify(run);
  return lines.join('\n');
}

/** The JSONL export with line `i` (0-based) replaced by the JSON of an edited copy. */
function withLine(file: FileName, i: number, edit: (o: Record<string, unknown>) => void): string {
  const lines = FILES[file].split('\n');
  const o = JSON.parse(lines[i]) as Record<string, unknown>;
  edit(o);
  lines[i] = JSON.stringify(o);
  return lines.join('\n');
}

/** Sets own property `k`, even __proto__ (a JSON key like any other). */
const setOwn = (o: Record<string, unknown>, k: string, v: unknown) =>
  Object.defineProperty(o, k, { value: v, enumerable: true, configurable: true, writable: true });

function cases(): Case[] {
  const rng = new Rng(31_337);
  const out: Case[] = [];
  const files = Object.keys(FILES) as FileName[];
  // The run line's config: every field with a value wrong for its kind, and names that are no field.
  for (const field of FIELD_NAMES) {
    const bad = pick(rng, badJsonValues(FIELD_SPECS[field]));
    const file = pick(rng, files);
    out.push({
      label: `${file} config.${field}=${String(JSON.stringify(bad)).slice(0, 30)}`,
      file,
      text: withRunLine(file, (r) => ((r.config as Record<string, unknown>)[field] = bad)),
      mustName: `line 1: the run's config is not valid here: ${field}`,
    });
  }
  for (const name of INHERITED_NAMES) {
    const file = pick(rng, files);
    out.push({
      label: `${file} config.${name}`,
      file,
      text: withRunLine(file, (r) => setOwn(r.config as Record<string, unknown>, name, 1)),
      mustName: `unknown field ${name}`,
    });
  }
  // The run line itself.
  const runEdits: [string, (r: Record<string, unknown>) => void, string][] = [
    ['no config', (r) => delete r.config, 'line 1: the run line has no config object'],
    ['config null', (r) => (r.config = null), 'line 1: the run line has no config object'],
    ['config array', (r) => (r.config = []), 'line 1: the run line has no config object'],
    ['version 99', (r) => (r.version = 99), 'line 1: format version 99'],
    ['version text', (r) => (r.version = '1'), 'line 1: format version "1"'],
    ['format other', (r) => (r.format = 'other'), 'line 1: not an RL Lab run export'],
    ['type step', (r) => (r.type = 'step'), 'line 1: not an RL Lab run export'],
    ['preset unknown', (r) => (r.preset = 'grpoo'), 'line 1: unknown preset "grpoo"'],
    ['preset number', (r) => (r.preset = 5), 'line 1: preset must be a string'],
  ];
  for (const file of files)
    for (const [label, edit, want] of runEdits)
      out.push({ label: `${file} run line ${label}`, file, text: withRunLine(file, edit), mustName: want });
  // Harmless run-line oddities: the importer fills in what it can.
  for (const file of files) {
    for (const [label, edit] of [
      ['name number', (r: Record<string, unknown>) => (r.name = 5)],
      ['status odd', (r: Record<string, unknown>) => (r.status = '__proto__')],
      ['extra key', (r: Record<string, unknown>) => setOwn(r, '__proto__', { polluted: 1 })],
    ] as const) {
      out.push({ label: `${file} run line ${label}`, file, text: withRunLine(file, edit), mustName: null });
    }
  }
  // Step and eval lines (metrics JSONL).
  const stepEdits: [string, (o: Record<string, unknown>) => void, string][] = [
    ['step 0', (o) => (o.step = 0), 'step must be a whole number >= 1'],
    ['step text', (o) => (o.step = 'x'), 'step must be a whole number >= 1'],
    ['step 1.5', (o) => (o.step = 1.5), 'step must be a whole number >= 1'],
    ['optimizer_step missing', (o) => delete o.optimizer_step, 'optimizer_step must be a whole number >= 1'],
    ['metrics missing', (o) => delete o.metrics, 'metrics must be an object'],
    ['metrics array', (o) => (o.metrics = [1]), 'metrics must be an object'],
    ['metric text', (o) => (o.metrics = { reward: 'abc' }), 'metrics.reward must be a number'],
    ['metric object', (o) => (o.metrics = { reward: {} }), 'metrics.reward must be a number'],
    ['type unknown', (o) => (o.type = 'toString'), 'unknown line type "toString"'],
    ['type run', (o) => (o.type = 'run'), 'a second run line'],
    ['updates 0', (o) => (o.updates = 0), 'updates must be a whole number >= 1'],
  ];
  for (const [label, edit, want] of stepEdits) {
    const line = 1 + rng.int(rows.length);
    out.push({
      label: `metrics.jsonl line ${line + 1} ${label}`,
      file: 'metrics.jsonl',
      text: withLine('metrics.jsonl', line, edit),
      mustName: `line ${line + 1}: ${want}`,
    });
  }
  const evalLine = rows.length + 1;
  for (const [label, edit, want] of [
    ['pass_at_k missing', (o: Record<string, unknown>) => delete o.pass_at_k, 'pass_at_k must be an array'],
    ['pass_at_k text', (o: Record<string, unknown>) => (o.pass_at_k = ['x']), 'pass_at_k[0] must be a number'],
    ['accuracy text', (o: Record<string, unknown>) => (o.accuracy = 'x'), 'accuracy must be a number'],
  ] as const) {
    out.push({
      label: `metrics.jsonl eval ${label}`,
      file: 'metrics.jsonl',
      text: withLine('metrics.jsonl', evalLine, edit),
      mustName: `line ${evalLine + 1}: ${want}`,
    });
  }
  out.push({
    label: 'metrics.jsonl metrics named like Object members',
    file: 'metrics.jsonl',
    text: withLine('metrics.jsonl', 1, (o) => (o.metrics = JSON.parse('{"constructor":1,"__proto__":2,"toString":3}'))),
    mustName: null,
  });
  // Group lines (rollouts JSONL).
  const groupEdits: [string, (o: Record<string, unknown>) => void, string][] = [
    ['completions missing', (o) => delete o.completions, 'completions must be an array'],
    ['prompt number', (o) => (o.prompt = 5), 'prompt must be a string'],
    ['completion null', (o) => (o.completions = [null]), 'completions[0] must be an object'],
    [
      'length text',
      (o) => ((o.completions as Record<string, unknown>[])[0].length = 'x'),
      'completions[0].length must be a whole number',
    ],
    [
      'tokens missing',
      (o) => delete (o.completions as Record<string, unknown>[])[0].tokens,
      'completions[0].tokens must be an object',
    ],
    [
      'plane short',
      (o) => (((o.completions as Record<string, unknown>[])[0].tokens as Record<string, unknown>).logp = [1]),
      'completions[0].tokens.logp has 1 entries, want length 3',
    ],
    [
      'plane text',
      (o) => (((o.completions as Record<string, unknown>[])[0].tokens as Record<string, unknown>).ratio = 'x'),
      'completions[0].tokens.ratio must be an array',
    ],
    [
      'plane value text',
      (o) => (((o.completions as Record<string, unknown>[])[0].tokens as Record<string, unknown>).kl = [0, 'x', 0]),
      'completions[0].tokens.kl[1] must be a number',
    ],
    [
      'text number',
      (o) => ((o.completions as Record<string, unknown>[])[0].text = 5),
      'completions[0].text must be a string',
    ],
    [
      'rewards text',
      (o) => ((o.completions as Record<string, unknown>[])[0].rewards = 'x'),
      'completions[0].rewards must be an object',
    ],
  ];
  for (const [label, edit, want] of groupEdits)
    out.push({
      label: `rollouts.jsonl ${label}`,
      file: 'rollouts.jsonl',
      text: withLine('rollouts.jsonl', 1, edit),
      mustName: `line 2: ${want}`,
    });
  // CSV cells.
  const csvLines = FILES['metrics.csv'].split('\n');
  for (let i = 0; i < 20; i++) {
    const line = 2 + rng.int(rows.length);
    const cells = csvLines[line].split(',');
    const col = rng.int(cells.length);
    const bad = pick(rng, ['x', '1e', '--', '"', 'NaNx', '0x']);
    const edited = [...csvLines];
    edited[line] = cells.map((c, k) => (k === col ? bad : c)).join(',');
    out.push({
      label: `metrics.csv line ${line + 1} column ${col} = ${bad}`,
      file: 'metrics.csv',
      text: edited.join('\n'),
      mustName: `line ${line + 1}: `,
    });
  }
  for (let i = 0; i < 5; i++) {
    const line = 2 + rng.int(rows.length);
    const edited = [...csvLines];
    edited[line] += ',1'.repeat(1 + rng.int(3));
    out.push({
      label: `metrics.csv line ${line + 1} extra cells`,
      file: 'metrics.csv',
      text: edited.join('\n'),
      mustName: `line ${line + 1}: `,
    });
  }
  out.push({
    label: 'metrics.csv header row wrong',
    file: 'metrics.csv',
    text: [csvLines[0], 'steps,optimizer_step', ...csvLines.slice(2)].join('\n'),
    mustName: 'line 2: the header row must start with',
  });
  out.push({
    label: 'metrics.csv run line not JSON',
    file: 'metrics.csv',
    text: ['# rl-lab-run {', ...csvLines.slice(1)].join('\n'),
    mustName: 'line 1: the run description is not valid JSON',
  });
  // Cut anywhere: refused by line, or (cut at a line's end) the rows before it.
  for (let i = 0; i < 60; i++) {
    const file = pick(rng, files);
    const text = FILES[file];
    const cut = 1 + rng.int(text.length - 1);
    out.push({ label: `${file} cut at ${cut}`, file, text: text.slice(0, cut), mustName: null });
  }
  // A character inserted anywhere.
  for (let i = 0; i < 60; i++) {
    const file = pick(rng, files);
    const text = FILES[file];
    const at = rng.int(text.length);
    const ch = pick(rng, ['"', '{', '}', ',', ':', '1', 'x', '\n', '#', '\\', '[', ']']);
    out.push({
      label: `${file} + char at ${at}`,
      file,
      text: text.slice(0, at) + ch + text.slice(at),
      mustName: null,
      digitInserted: ch === '1',
    });
  }
  // Whole lines dropped or doubled.
  for (let i = 0; i < 30; i++) {
    const file = pick(rng, files);
    const lines = FILES[file].split('\n');
    const at = rng.int(lines.length);
    const edited =
      rng.next() < 0.5 ? lines.filter((_, k) => k !== at) : [...lines.slice(0, at + 1), ...lines.slice(at)];
    out.push({
      label: `${file} line ${at + 1} ${edited.length < lines.length ? 'dropped' : 'doubled'}`,
      file,
      text: edited.join('\n'),
      mustName: null,
    });
  }
  return out;
}

const CASES = cases();

describe('fuzz: run imports', () => {
  it.each(CASES.map((c) => [c.label, c] as const))('%s', (_, c) => {
    let refused: RunFileError | null = null;
    try {
      const run = parseRunFile(c.file, c.text);
      if (c.digitInserted) {
        // A digit inside a number is a valid edit of that one value (the export carries no checksum).
        const cfg = run.header.config as unknown as Record<string, unknown>;
        const orig = header.config as unknown as Record<string, unknown>;
        const changed = Object.keys(orig).filter((k) => JSON.stringify(cfg[k]) !== JSON.stringify(orig[k]));
        expect(Object.keys(cfg).sort()).toEqual(Object.keys(orig).sort());
        expect(changed.length, `changed: ${changed.join(', ')}`).toBeLessThanOrEqual(1);
      } else expect(run.header.config).toEqual(header.config);
    } catch (e) {
      if (!(e instanceof RunFileError)) throw e;
      refused = e;
    }
    if (c.mustName !== null) {
      expect(refused, `${c.label}: accepted in silence`).not.toBeNull();
      expect(refused!.message).toContain(c.mustName);
    }
    if (refused) {
      expect(refused.message.startsWith(`${c.file}: `), refused.message).toBe(true);
      expect(refused.message.length, `${c.label}: ${refused.message}`).toBeLessThanOrEqual(1_500);
    }
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('has several hundred cases', () => {
    expect(CASES.length).toBeGreaterThan(200);
  });
});
