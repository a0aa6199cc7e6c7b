// docs/metrics.md as a string, rendered from the metric catalog (metrics.ts): one section per chart, one entry per
// metric, the per-step histograms and their bins (histograms.ts), then the other trainers' names and the former names. scripts/make-metrics-doc.ts writes it
// (`npm run docs:metrics`); metrics.test.ts fails when the file in the repository differs. Pure; no file access.

import { HISTOGRAMS, HISTOGRAM_IDS } from './histograms';
import { CHARTS, METRICS, type ChartFamily, type MetricAlert, type MetricSpec } from './metrics';

/** Where the generated page lives, relative to the repository root. */
export const METRICS_DOC_PATH = 'docs/metrics.md';

/** Text safe for Markdown outside code: `<fn>` would otherwise read as an HTML tag. */
function escapeMarkdown(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/<(?=[A-Za-z/])/g, '&lt;');
}

/**
 * Identifiers set in code: names with a slash (`clip_ratio/low_mean`, `rewards/<fn>/mean`, verl's `actor/ppo_kl`), snake_case names
 * (config fields, metric names, symbols such as pi_theta) and placeholders (`<fn>`). Plain words stay prose.
 */
const IDENTIFIER = /[A-Za-z0-9_<>]+(?:\/[A-Za-z0-9_<>*]+)+|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|<[a-z]+>/g;

/** Slash names are code when every segment is a word (`actor/pg_clipfrac`), not arithmetic (`1/N`, `0/1`). */
function isCodeToken(token: string): boolean {
  return !token.includes('/') || token.split('/').every((part) => /^[A-Za-z<*]/.test(part));
}

/** Prose for Markdown: identifiers as code, the rest escaped. */
function prose(text: string): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(IDENTIFIER)) {
    const token = match[0];
    if (!isCodeToken(token)) continue;
    out += escapeMarkdown(text.slice(last, match.index)) + code(token);
    last = match.index + token.length;
  }
  return out + escapeMarkdown(text.slice(last));
}

function code(text: string): string {
  return `\`${text}\``;
}

/** A table cell: prose with its pipes escaped. */
function cell(text: string): string {
  return prose(text).replace(/\|/g, '\\|');
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function anchor(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
}

const PER: Record<MetricSpec['per'], string> = {
  rollout: 'once per rollout step (repeated on each of its optimizer steps)',
  update: 'per optimizer step',
};

function otherNames(m: MetricSpec): string[] {
  const out: string[] = [];
  if (m.trl) out.push(`TRL ${code(m.trl)}`);
  if (m.verl) out.push(`verl ${code(m.verl)}`);
  if (m.openrlhf) out.push(`OpenRLHF ${code(m.openrlhf)}`);
  if (m.primeRl) out.push(`prime-rl ${code(m.primeRl)}`);
  return out;
}

const ALERT_CONDITION: Record<MetricAlert['direction'], string> = {
  high: 'at or above',
  low: 'at or below',
  flat: 'moving by at most',
};

function alertText(a: MetricAlert): string {
  const over =
    a.direction === 'flat'
      ? `over ${a.steps} rollout steps`
      : a.steps === 1
        ? 'on a rollout step'
        : `for ${a.steps} rollout steps in a row`;
  const lesson = a.lesson ? ` Lesson: ${code(a.lesson)}.` : '';
  return `*${a.title}*, ${ALERT_CONDITION[a.direction]} ${a.threshold} ${over}. ${prose(a.cause)} What usually helps: ${prose(a.knob)}${lesson}`;
}

function entry(m: MetricSpec): string[] {
  const lines = [`### ${code(m.name)}`, '', prose(m.doc), ''];
  lines.push(`- **Formula:** ${code(m.formula)}`);
  lines.push(`- **Healthy:** ${prose(m.healthy)}`);
  lines.push(`- **When it moves:** ${prose(m.moves)}`);
  lines.push(
    `- **Unit:** ${m.unit || 'a plain number'}. **Logged:** ${PER[m.per]}. **Emitted:** ${m.when ? prose(m.when) : 'always'}.`,
  );
  const others = otherNames(m);
  if (others.length)
    lines.push(
      `- **Other trainers:** ${others.join(', ')}.${m.compare ? ` How they differ: ${prose(m.compare)}.` : ''}`,
    );
  if (m.alert) lines.push(`- **Alert:** ${alertText(m.alert)}`);
  if (m.formerly?.length) {
    const former = m.formerly.map((f) =>
      f.scale !== undefined && f.scale !== 1 ? `${code(f.name)} (values x ${f.scale})` : code(f.name),
    );
    lines.push(`- **Formerly:** ${former.join(', ')}; files that use it import under the current name.`);
  }
  lines.push('');
  return lines;
}

const INTRO = [
  '# Metrics',
  '',
  '<!-- Generated from src/schema/metrics.ts by `npm run docs:metrics`. Edit the catalog there, not this file. -->',
  '',
  'Every number the trainer reports, by the name it is logged under: the names on the charts, in the CSV and JSONL',
  "exports, and in `npm run train`'s metrics.jsonl. Look a name up here to learn what it measures, how it is",
  'computed, where a healthy run keeps it and what it means when it moves.',
  '',
  'The trainer yields one record per optimizer step. Some metrics describe the whole rollout step (the sampled batch:',
  'rewards, lengths, timings); they are logged once per rollout step and repeated on each of its optimizer steps, so',
  'every record holds every metric. The others describe one optimizer step (its minibatch and the policy at that',
  'step: entropy, KL, clip ratios, losses). With `num_iterations` 1 and one minibatch the two coincide.',
  '',
  'A name with `<fn>`, `<phase>` or `<matrix>` stands for a family: `rewards/<fn>/mean` is logged as',
  '`rewards/accuracy/mean`, `rewards/format/mean`, and so on, one per reward function, and',
  '`weights/<matrix>/rel_update` as `weights/layers.0.q/rel_update`, one per weight. Names follow TRL where TRL has the metric, so a',
  "TRL user reads them as they are; [other trainers' names](#other-trainers-names) lists what TRL, verl and OpenRLHF",
  'call each quantity.',
  '',
  'Formulas use the notation of [the algorithms page](algorithms.md#notation), in ASCII: a rollout step samples',
  'B prompts and G completions y_i per prompt (N = B*G); m_{i,t} is the loss mask (1 for a completion token that',
  'counts); |y_i| = sum_t m_{i,t}; M = sum_{i,t} m_{i,t} over the sequences of one optimizer step; len(y_i) is the',
  'number of tokens sampled for y_i, EOS included; r_i is the reward, A_{i,t} the advantage, rho_{i,t} =',
  'pi_theta(y_{i,t}) / pi_old(y_{i,t}) the importance ratio, H_{i,t} the entropy of pi_theta at that token, and every',
  'probability is computed at the sampling temperature tau. [x] is 1 when x holds and 0 otherwise.',
  '',
  "The healthy ranges are for this lab's small tasks and nano models (copy, sort, addition, ... from their warm",
  'starts); larger models and other tasks move them.',
  '',
  'A metric with an **Alert** line is watched while a run trains: when its condition holds for the steps it names,',
  'the lab (and `npm run train`) warns with the likely cause and the knob that usually helps, marks the step on the',
  "metric's chart, and pauses the run when `alert_action` is `pause`.",
  '',
];

/** The whole page. */
export function renderMetricsDoc(): string {
  const lines = [...INTRO, '## Charts', ''];
  const byChart = CHARTS.map((c) => ({
    chart: c,
    metrics: METRICS.filter((m) => m.chart === c.id) as MetricSpec[],
  })).filter((g) => g.metrics.length);
  for (const { chart, metrics } of byChart) {
    lines.push(`- [${chart.title}](#${anchor(chart.title)}): ${metrics.map((m) => code(m.name)).join(', ')}`);
  }
  lines.push('');
  for (const { chart, metrics } of byChart) {
    lines.push(`## ${chart.title}`, '');
    const band = 'band' in chart ? ` The band is ${code(chart.band.mean)} ± ${code(chart.band.std)}.` : '';
    lines.push(`The ${code(chart.id)} chart; its y axis: ${chart.y}.${band}`, '');
    const family: ChartFamily = chart;
    if (family.note) lines.push(`Under its title: ${prose(family.note)}.`, '');
    for (const q of family.quiet ?? []) {
      const knobs = q.when
        .map((c) =>
          'is' in c
            ? `${code(c.knob)} ${c.is.map(String).join(' or ')}`
            : `${code(c.knob)} not ${c.not.map(String).join(' or ')}`,
        )
        .join(' and ');
      const what = q.metrics ? q.metrics.map(code).join(', ') : 'the chart';
      const verb = q.metrics && q.metrics.length > 1 ? 'are' : 'is';
      lines.push(
        `With ${knobs}, ${what} ${verb} ${q.kind === 'off' ? 'off' : 'always 0'} (${prose(q.why)}); the chart says so.`,
        '',
      );
    }
    for (const m of metrics) lines.push(...entry(m));
  }
  lines.push(
    '## Histograms',
    '',
    "Beside its scalars, each rollout step records these distributions with fixed bins (on its last optimizer step's",
    "record, and in the metrics JSONL as that step line's `histograms`, in the CSV as `# histograms` comment lines). The",
    "page draws each as a heatmap over steps, colour = the bin's share of the step's counts. Bin k is [e_k, e_{k+1});",
    'the first and last bins are open (they also take values below the first edge and at or above the last).',
    'Each held-out evaluation also records its solve-rate histogram, `solved_by`: entry c counts the prompts that exactly c',
    'of their `eval_num_generations` samples pass.',
    '',
  );
  for (const id of HISTOGRAM_IDS) {
    const h = HISTOGRAMS[id];
    lines.push(
      `### ${code(id)}`,
      '',
      prose(h.doc),
      '',
      `- **Counts:** ${h.counts}, unit ${h.unit}`,
      `- **Edges:** ${h.edges.join(', ')}`,
      '',
    );
  }
  lines.push(
    "## Other trainers' names",
    '',
    'The same quantity under its name in TRL, verl and OpenRLHF; a blank cell: that trainer does not log it. TRL and',
    'OpenRLHF show theirs under a `train/` prefix in W&B.',
    '',
    '| RL Lab | TRL | verl | OpenRLHF | how they differ |',
    '|---|---|---|---|---|',
  );
  for (const m of METRICS as readonly MetricSpec[]) {
    if (!m.trl && !m.verl && !m.openrlhf) continue;
    const name = (n: string | undefined) => (n ? code(n) : '');
    lines.push(
      `| ${code(m.name)} | ${name(m.trl)} | ${name(m.verl)} | ${name(m.openrlhf)} | ${m.compare ? cell(m.compare) : ''} |`,
    );
  }
  lines.push(
    '',
    '## Former names',
    '',
    'Files exported before a rename import under the current name, their values multiplied by the factor.',
    '',
  );
  lines.push('| former name | current name | factor |', '|---|---|---|');
  for (const m of METRICS as readonly MetricSpec[]) {
    for (const f of m.formerly ?? []) lines.push(`| ${code(f.name)} | ${code(m.name)} | ${f.scale ?? 1} |`);
  }
  return lines.join('\n') + '\n';
}
