// Export formats round-trip exactly (NaN and infinities included), token planes keep their types, files written
// before metric renames (and before rows carried update/updates) import under the current names, and every kind
// of malformed file is refused with the file name, the line and the reason. Histograms and solve rates round-trip too.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../schema/config';
import type { GroupRecord } from '../schema/stream';
import { HISTOGRAMS, type HistogramId } from '../schema/histograms';
import { splitCsvLine } from '../core/csv';
import { metricsToCsv, metricsToJsonl, parseRunFile, rolloutsToJsonl, RunFileError } from './run-files';
import { withUpdateIndex } from '../schema/metric-batch';
import type { MetricRow, RunHeader } from '../schema/run-types';

const config = resolveConfig('dapo', { task: 'copy', seed: 7, steps: 3 });
const header: RunHeader = {
  id: 'run-1',
  name: 'DAPO, "copy"',
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000,
  config,
  preset: 'dapo',
  backend: 'webgpu',
  status: 'done',
  step: 3,
  savedStep: 3,
  elapsedMs: 1234,
  adapter: 'test adapter',
  lastMetrics: {},
};
const rows: MetricRow[] = [
  {
    step: 1,
    optimizerStep: 1,
    epoch: 0,
    minibatch: 0,
    metrics: { reward: 0.25, entropy: 1.5, 'clip_ratio/low_mean': 0, kl: NaN },
  },
  {
    step: 1,
    optimizerStep: 2,
    epoch: 1,
    minibatch: 0,
    metrics: { reward: 0.25, entropy: 1.25, 'clip_ratio/low_mean': 0.125, grad_norm: Infinity },
  },
  {
    step: 2,
    optimizerStep: 3,
    epoch: 0,
    minibatch: 0,
    metrics: { reward: -0.5, entropy: 1e-9, 'rewards/a,b/mean': -Infinity },
  },
];
const evals = [{ step: 2, items: 4, accuracy: 0.5, reward: 0.6, passAtK: [0.5, 0.75, NaN] }];
/** The rows as they come back: each with its index among its rollout step's optimizer steps, and their count. */
const rowsBack: MetricRow[] = [
  { ...rows[0], update: 0, updates: 2 },
  { ...rows[1], update: 1, updates: 2 },
  { ...rows[2], update: 0, updates: 1 },
];

function group(): GroupRecord {
  const n = 3;
  return {
    index: 1,
    prompt: 'copy:ab=',
    answer: 'ab',
    completions: [
      {
        text: 'ab',
        length: n,
        finished: true,
        reward: 1,
        rewards: { accuracy: 1, format: 1 },
        reason: 'correct',
        masked: false,
        tokens: {
          tokens: Uint32Array.from([5, 6, 2]),
          logpOld: Float32Array.from([-0.1, -0.2, -0.3]),
          logp: Float32Array.from([-0.11, -0.19, -0.3]),
          logpSampler: Float32Array.from([-0.1, -0.2, -0.3]),
          entropy: Float32Array.from([1, 2, 3]),
          ratio: Float32Array.from([0.99, 1.01, 1]),
          advantage: Float32Array.from([0.5, 0.5, 0.5]),
          clipSide: Int8Array.from([0, 1, -1]),
          kl: Float32Array.from([0, 0.01, 0]),
          loss: Float32Array.from([-0.1, -0.2, -0.3]),
          weight: Float32Array.from([0.2, 0.2, 0.2]),
          value: new Float32Array(0),
        },
      },
    ],
  };
}

describe('run export formats', () => {
  it('refuses a metrics row whose last cell opens a quote it never closes (its cells would vanish into it)', () => {
    const lines = metricsToCsv(header, rows).split('\n');
    expect(splitCsvLine('1,"a,b",2')).toEqual(['1', 'a,b', '2']);
    expect(splitCsvLine('1,2,"')).toBeNull();
    lines[2] = `${lines[2].slice(0, lines[2].lastIndexOf(','))},"`;
    expect(() => parseRunFile('metrics.csv', lines.join('\n'))).toThrow(/line 3: a quoted cell is never closed/);
  });

  it('metrics JSONL round-trips rows (NaN, ±inf), evals and the config', () => {
    const back = parseRunFile('a.jsonl', metricsToJsonl(header, rows, evals));
    expect(back.rows).toEqual(rowsBack);
    expect(back.evals).toEqual(evals);
    expect(back.header.config).toEqual(config);
    expect(back.header.preset).toBe('dapo');
    expect(back.header.name).toBe(header.name);
    expect(back.header.importedFrom).toBe('a.jsonl');
  });

  it("metrics JSONL round-trips each rollout step's histograms and each evaluation's solve-rate histogram", () => {
    const K = (id: HistogramId) => HISTOGRAMS[id].edges.length - 1;
    const entropy = Array.from({ length: K('entropy') }, (_, b) => b * 3);
    const advantage = Array.from({ length: K('advantage') }, (_, b) => (b % 2 ? 0 : 7));
    const withHist: MetricRow[] = [
      rows[0],
      { ...rows[1], histograms: { entropy, advantage } },
      { ...rows[2], histograms: { entropy: new Array(K('entropy')).fill(0) } },
    ];
    const solved = [
      { step: 0, items: 4, accuracy: 0, reward: 0, passAtK: [0.25], solvedBy: [3, 1] },
      { ...evals[0], solvedBy: [1, 0, 2, 1] },
    ];
    const text = metricsToJsonl(header, withHist, solved);
    const back = parseRunFile('h.jsonl', text);
    expect(back.rows.map((r) => r.histograms)).toEqual([
      undefined,
      { entropy, advantage },
      { entropy: new Array(K('entropy')).fill(0) },
    ]);
    expect(back.evals).toEqual(solved);
    // The CSV keeps them on comment lines after its rows, which pandas skips.
    const csv = metricsToCsv(header, withHist, solved);
    const fromCsv = parseRunFile('h.csv', csv);
    expect(fromCsv.rows.map((r) => r.histograms)).toEqual([
      undefined,
      { entropy, advantage },
      { entropy: new Array(K('entropy')).fill(0) },
    ]);
    expect(fromCsv.evals).toEqual(solved);
    expect(() => parseRunFile('l.csv', csv.replace('"optimizer_step":2', '"optimizer_step":9'))).toThrow(
      /^l\.csv: line \d+: histograms of optimizer_step 9, which has no row/,
    );
    // A histogram with the wrong bins, or one this lab does not record, is refused with its line.
    expect(() => parseRunFile('i.jsonl', text.replace(`"entropy":[${entropy.join(',')}]`, '"entropy":[1,2]'))).toThrow(
      /^i\.jsonl: line 3: histograms\.entropy has 2 bins, want \d+/,
    );
    expect(() => parseRunFile('j.jsonl', text.replace('"histograms":{"entropy"', '"histograms":{"ratio"'))).toThrow(
      /^j\.jsonl: line 3: histograms\.ratio: not a histogram this lab records/,
    );
    expect(() => parseRunFile('k.jsonl', text.replace('"solved_by":[1,0,2,1]', '"solved_by":[1,-1]'))).toThrow(
      /solved_by\[1\] must be a whole number/,
    );
  });

  it('metrics CSV round-trips rows, with a comment line pandas skips, metrics in catalog order and quoted names', () => {
    const text = metricsToCsv(header, [
      ...rows,
      { step: 2, optimizerStep: 4, epoch: 0, minibatch: 1, metrics: { zeta: 1, alpha: 2 } },
    ]);
    const lines = text.split('\n');
    expect(lines[0].startsWith('# rl-lab-run {')).toBe(true);
    expect(splitCsvLine(lines[1])).toEqual([
      'step',
      'optimizer_step',
      'epoch',
      'minibatch',
      'update',
      'updates',
      'reward',
      'entropy',
      'clip_ratio/low_mean',
      'kl',
      'grad_norm',
      'rewards/a,b/mean',
      'alpha',
      'zeta',
    ]);
    expect(lines[2]).toBe('1,1,0,0,0,2,0.25,1.5,0,NaN,,,,');
    const back = parseRunFile('a.csv', metricsToCsv(header, rows));
    expect(back.rows).toEqual(rowsBack);
    expect(back.header.config).toEqual(config);
  });

  it('metrics CSV carries the evaluations as comment lines after the rows; files without them still import', () => {
    const text = metricsToCsv(header, rows, evals);
    const lines = text.trimEnd().split('\n');
    // One `# eval` line per evaluation, last, so pandas (comment='#') reads the same table as before.
    expect(lines.slice(-1)[0]).toBe(
      '# eval {"type":"eval","step":2,"items":4,"accuracy":0.5,"reward":0.6,"pass_at_k":[0.5,0.75,null]}',
    );
    expect(lines.filter((l) => l.startsWith('#'))).toHaveLength(2);
    const back = parseRunFile('e.csv', text);
    expect(back.rows).toEqual(rowsBack);
    expect(back.evals).toEqual(evals);
    // The same run as its JSONL export gives, but for the file it came from.
    expect({ ...back, header: { ...back.header, importedFrom: 'e.jsonl' } }).toEqual(
      parseRunFile('e.jsonl', metricsToJsonl(header, rows, evals)),
    );
    // A CSV written before the eval lines (none at the end) imports with no evaluations.
    expect(parseRunFile('old.csv', metricsToCsv(header, rows)).evals).toEqual([]);
    expect(() => parseRunFile('f.csv', text.replace('"pass_at_k":[', '"pass_at_k":{'))).toThrow(
      /^f\.csv: line 6: the evaluation is not valid JSON/,
    );
    expect(() => parseRunFile('g.csv', text.replace('"pass_at_k":[0.5,0.75,null]', '"pass_at_k":3'))).toThrow(
      /^g\.csv: line 6: pass_at_k must be an array of numbers/,
    );
  });

  it('keeps the update index a row carries, and fills it in by rollout step where a row has none', () => {
    const recorded: MetricRow[] = [
      { step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, update: 0, updates: 3, metrics: { reward: 1 } },
      { step: 1, optimizerStep: 2, epoch: 0, minibatch: 1, update: 1, updates: 3, metrics: { reward: 1 } },
      { step: 1, optimizerStep: 3, epoch: 0, minibatch: 2, update: 2, updates: 3, metrics: { reward: 1 } },
      { step: 2, optimizerStep: 5, epoch: 1, minibatch: 0, metrics: { reward: 2 } },
      { step: 2, optimizerStep: 4, epoch: 0, minibatch: 0, metrics: { reward: 2 } },
    ];
    const want = [
      ...recorded.slice(0, 3),
      { ...recorded[4], update: 0, updates: 2 },
      { ...recorded[3], update: 1, updates: 2 },
    ];
    expect(withUpdateIndex(recorded)).toEqual([
      ...recorded.slice(0, 3),
      { ...recorded[3], update: 1, updates: 2 },
      { ...recorded[4], update: 0, updates: 2 },
    ]);
    expect(parseRunFile('u.csv', metricsToCsv(header, recorded)).rows).toEqual(want);
    expect(parseRunFile('u.jsonl', metricsToJsonl(header, recorded, [])).rows).toEqual(want);
  });

  it('imports files written before the renames: former names under the current ones (scaled), update/updates computed', () => {
    const runLine = metricsToCsv(header, []).split('\n')[0];
    const oldCsv = [
      runLine,
      'step,optimizer_step,epoch,minibatch,reward,perf/step_ms,timing_s/step,sampling/logp_diff/mean,timing_s/gen',
      '1,1,0,0,0.5,1250,1.25,1e-7,0.5',
      '1,2,1,0,0.5,1250,1.25,2e-7,0.5',
      '2,3,0,0,0.75,2000,,,0.25',
    ].join('\n');
    const back = parseRunFile('old.csv', oldCsv);
    expect(back.rows).toEqual([
      {
        step: 1,
        optimizerStep: 1,
        epoch: 0,
        minibatch: 0,
        update: 0,
        updates: 2,
        metrics: { reward: 0.5, step_time: 1.25, 'sampling/sampling_logp_difference/mean': 1e-7, 'timing_s/gen': 0.5 },
      },
      {
        step: 1,
        optimizerStep: 2,
        epoch: 1,
        minibatch: 0,
        update: 1,
        updates: 2,
        metrics: { reward: 0.5, step_time: 1.25, 'sampling/sampling_logp_difference/mean': 2e-7, 'timing_s/gen': 0.5 },
      },
      {
        step: 2,
        optimizerStep: 3,
        epoch: 0,
        minibatch: 0,
        update: 0,
        updates: 1,
        metrics: { reward: 0.75, step_time: 2, 'timing_s/gen': 0.25 },
      },
    ]);
    expect(back.header.lastMetrics).toEqual({ reward: 0.75, step_time: 2, 'timing_s/gen': 0.25 });

    const oldJsonl = [
      runLine.slice('# rl-lab-run '.length),
      JSON.stringify({
        type: 'step',
        step: 1,
        optimizer_step: 1,
        epoch: 0,
        minibatch: 0,
        metrics: { 'perf/step_ms': 500, 'sampling/logp_diff/max': 3e-7 },
      }),
      JSON.stringify({
        type: 'step',
        step: 1,
        optimizer_step: 2,
        epoch: 0,
        minibatch: 1,
        metrics: { 'perf/step_ms': 500, step_time: 0.4 },
      }),
    ].join('\n');
    expect(parseRunFile('old.jsonl', oldJsonl).rows).toEqual([
      {
        step: 1,
        optimizerStep: 1,
        epoch: 0,
        minibatch: 0,
        update: 0,
        updates: 2,
        metrics: { step_time: 0.5, 'sampling/sampling_logp_difference/max': 3e-7 },
      },
      // A current name in the same row wins over a former one.
      { step: 1, optimizerStep: 2, epoch: 0, minibatch: 1, update: 1, updates: 2, metrics: { step_time: 0.4 } },
    ]);
  });

  it('rollouts JSONL keeps every token plane with its type', () => {
    const g = group();
    const back = parseRunFile('r.jsonl', rolloutsToJsonl(header, [{ step: 2, groups: [g] }]));
    expect(back.rollouts).toHaveLength(1);
    const c = back.rollouts[0].groups[0].completions[0];
    expect(c.tokens.tokens).toBeInstanceOf(Uint32Array);
    expect(c.tokens.clipSide).toBeInstanceOf(Int8Array);
    expect(Array.from(c.tokens.clipSide)).toEqual([0, 1, -1]);
    expect(c.tokens.logp).toEqual(g.completions[0].tokens.logp);
    expect(back.rollouts[0].groups[0]).toEqual(g);
  });

  it('rollouts JSONL keeps every group of a step in brief, beside its sampled groups', () => {
    const g = group();
    const batch = [
      {
        index: 0,
        prompt: 'copy:ba=',
        answer: 'ba',
        completions: [
          { text: 'b', length: 2, finished: true, reward: 0.1, passed: false, advantage: -0.75, masked: false },
        ],
      },
      {
        index: 1,
        prompt: 'copy:ab=',
        answer: 'ab',
        completions: [
          { text: 'ab', length: 3, finished: true, reward: 1, passed: true, advantage: 0.5, masked: false },
        ],
      },
    ];
    const text = rolloutsToJsonl(header, [
      { step: 2, groups: [g], batch },
      { step: 3, groups: [g] },
    ]);
    const back = parseRunFile('s.jsonl', text);
    expect(back.rollouts.map((r) => [r.step, r.batch])).toEqual([
      [2, batch],
      [3, undefined],
    ]);
    expect(back.rollouts[0].groups[0]).toEqual(g);
    expect(() => parseRunFile('t.jsonl', text.replace('"advantage":-0.75', '"advantage":"x"'))).toThrow(
      /^t\.jsonl: line 2: groups\[0\]\.completions\[0\]\.advantage must be a number/,
    );
  });

  it('an evaluation with the rank-1 comparison (rank1_eval) round-trips through JSONL and CSV', () => {
    const withRank1 = [
      ...evals,
      { step: 4, items: 4, accuracy: 0.75, reward: 0.8, passAtK: [0.75, 1, 1], rank1: { accuracy: 0.25, reward: 0.3 } },
    ];
    const csv = metricsToCsv(header, rows, withRank1);
    expect(csv.trimEnd().split('\n').slice(-1)[0]).toContain('"rank1_accuracy":0.25,"rank1_reward":0.3');
    expect(parseRunFile('r.jsonl', metricsToJsonl(header, rows, withRank1)).evals).toEqual(withRank1);
    expect(parseRunFile('r.csv', csv).evals).toEqual(withRank1);
  });

  it('refuses malformed files with the file, the line and the reason', () => {
    const good = metricsToJsonl(header, rows, evals).split('\n');
    const cases: [string, string, RegExp][] = [
      ['empty.jsonl', '', /empty\.jsonl: the file is empty/],
      ['x.txt', 'hello', /x\.txt: line 1: not an RL Lab export/],
      ['a.jsonl', '{"type":"step"}', /a\.jsonl: line 1: not an RL Lab run export/],
      ['b.jsonl', `${good[0]}\n{not json`, /b\.jsonl: line 2: not valid JSON/],
      [
        'c.jsonl',
        `${good[0]}\n{"type":"step","step":0,"optimizer_step":1,"metrics":{}}`,
        /c\.jsonl: line 2: step must be a whole number >= 1/,
      ],
      [
        'd.jsonl',
        `${good[0]}\n{"type":"step","step":1,"optimizer_step":1,"metrics":{"reward":"high"}}`,
        /line 2: metrics\.reward must be a number/,
      ],
      ['e.jsonl', `${good[0]}\n{"type":"weird"}`, /line 2: unknown line type "weird"/],
      ['f.jsonl', good[0], /f\.jsonl: the run line is there but no step/],
      [
        'g.jsonl',
        good[0].replace('"num_generations":8', '"num_generations":0') + '\n' + good[1],
        /line 1: the run's config is not valid here: num_generations/,
      ],
      ['h.csv', '# rl-lab-run {"type":"run"}\nstep\n', /h\.csv: line 1: not an RL Lab run export/],
      [
        'i.csv',
        metricsToCsv(header, rows).replace('\n1,1,0,0,', '\n1,1,0,'),
        /i\.csv: line 3: 11 cells, but the header has 12 columns/,
      ],
      ['j.csv', metricsToCsv(header, rows).replace('1.5', 'abc'), /j\.csv: line 3: entropy: "abc" is not a number/],
      [
        'k.csv',
        metricsToCsv(header, rows).replace('\n1,1,0,0,0,2,', '\n1,1,0,0,0,0,'),
        /k\.csv: line 3: updates must be a whole number >= 1, got "0"/,
      ],
      [
        'l.jsonl',
        `${good[0]}\n{"type":"step","step":1,"optimizer_step":1,"update":-1,"metrics":{}}`,
        /l\.jsonl: line 2: update must be a whole number >= 0/,
      ],
    ];
    for (const [name, text, want] of cases) {
      let err: unknown;
      try {
        parseRunFile(name, text);
      } catch (e) {
        err = e;
      }
      expect(err, name).toBeInstanceOf(RunFileError);
      expect((err as Error).message, name).toMatch(want);
    }
  });

  it('imports a valid export with 130,000 optimizer-step rows', () => {
    // One row per optimizer step; the rows' largest step was once taken by spreading them into Math.max.
    const many: MetricRow[] = Array.from({ length: 130_000 }, (_, i) => ({
      step: i + 1,
      optimizerStep: i + 1,
      epoch: 0,
      minibatch: 0,
      metrics: { reward: i % 7 },
    }));
    const run = parseRunFile('big.csv', metricsToCsv(header, many));
    expect(run.rows).toHaveLength(130_000);
    expect(run.header.step).toBe(130_000);
  });

  it('keeps metrics named like Object members (constructor, __proto__, toString) through export and import', () => {
    const metrics = JSON.parse('{"constructor":1,"__proto__":2,"toString":3}') as Record<string, number>;
    const back = parseRunFile(
      'odd.jsonl',
      metricsToJsonl(header, [{ step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, metrics }], []),
    );
    expect(Object.entries(back.rows[0].metrics).sort()).toEqual([
      ['__proto__', 2],
      ['constructor', 1],
      ['toString', 3],
    ]);
  });
});
