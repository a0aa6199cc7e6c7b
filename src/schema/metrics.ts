// The metric catalog: every metric the trainer emits, declared once with what it measures, its formula, its
// healthy range, what a move means, its unit, the chart it is drawn on, and its names in TRL, verl and OpenRLHF.
// Charts, tooltips, the CSV header, the engine's progress, imports of other files and docs/metrics.md read it.
// A leaf module (no imports), so every layer from the kernels' twins up to the UI can name metrics through it.

/** The charts of the lab, in page order. Every metric is drawn on exactly one. */
export const CHARTS = [
  { id: 'reward', title: 'Reward and accuracy', y: 'reward', log: 'never', band: { mean: 'reward', std: 'reward_std' } },
  { id: 'entropy', title: 'Entropy', y: 'nats', log: 'off' },
  { id: 'clip', title: 'Clip ratio', y: 'fraction of tokens', log: 'off' },
  { id: 'kl', title: 'KL', y: 'nats', log: 'off' },
  { id: 'lengths', title: 'Completion length', y: 'tokens', log: 'never' },
  { id: 'fractions', title: 'Clipped and zero-signal fractions', y: 'fraction', log: 'never' },
  { id: 'loss', title: 'Loss', y: 'loss', log: 'never' },
  { id: 'grad', title: 'Gradient norm', y: 'L2 norm', log: 'on' },
  { id: 'lr', title: 'Learning rate and entropy coefficient', y: 'value', log: 'off' },
  { id: 'sampling', title: 'Sampler vs trainer log-prob gap', y: 'nats', log: 'off' },
  { id: 'rewards', title: 'Reward functions', y: 'reward', log: 'never' },
  { id: 'selection', title: 'Token selection', y: 'fraction of tokens', log: 'never' },
  { id: 'critic', title: 'Critic', y: 'value', log: 'off' },
  { id: 'curriculum', title: 'Curriculum', y: 'difficulty', log: 'never' },
  { id: 'tokens', title: 'Tokens', y: 'tokens', log: 'off' },
  { id: 'throughput', title: 'Throughput', y: 'tokens / s', log: 'on' },
  { id: 'time', title: 'Time', y: 'seconds', log: 'on' },
] as const satisfies readonly ChartFamily[];

/** One chart: its title, what its y axis counts, its log-scale default, and an optional mean ± std band. */
export interface ChartFamily {
  id: string;
  title: string;
  /** The y-axis label. */
  y: string;
  /** Log scale: 'on' by default, 'off' by default but offered, or never offered (values cross zero). */
  log: 'on' | 'off' | 'never';
  /** Draw mean ± std as a band (reward ± reward_std). */
  band?: { mean: string; std: string };
}

export type ChartId = (typeof CHARTS)[number]['id'];

/** One metric. `name` may be a template: `<fn>` and `<phase>` stand for one path segment each. */
export interface MetricSpec {
  name: string;
  /** What it measures, one sentence. */
  doc: string;
  /** Its definition in docs/algorithms.md's notation. */
  formula: string;
  /** Where a healthy run keeps it. */
  healthy: string;
  /** What it means when it moves (rises, falls, spikes, sticks). */
  moves: string;
  /** Unit of the value ('fraction', 'nats', 'tokens', 's', ...; '' for plain numbers). */
  unit: string;
  /** The chart it is drawn on. */
  chart: ChartId;
  /** 'rollout': one value per rollout step (repeated on each of its optimizer steps); 'update': one per optimizer step. */
  per: 'rollout' | 'update';
  /** When it is emitted (absent: always). */
  when?: string;
  /** The same quantity's name in other trainers' logs, where one exists. */
  trl?: string;
  verl?: string;
  openrlhf?: string;
  /** Names this metric had in earlier RL Lab files; they import under the current name. */
  formerly?: string[];
}

// PLACEHOLDER-UNTIL-MERGE
// A stand-in for the catalog's entries so this branch typechecks: the three metrics of the reward chart (its band
// included) and one template. The catalog's full METRICS and metricSpec replace everything below this line.

/** Every metric the trainer emits (placeholder: see the line above). */
export const METRICS: readonly MetricSpec[] = [
  { name: 'reward', doc: 'Mean total reward of the sampled completions.', formula: 'mean_i r_i', healthy: 'rises', moves: 'falls: the policy unlearns', unit: '', chart: 'reward', per: 'rollout' },
  { name: 'reward_std', doc: 'Standard deviation of the total reward over the batch.', formula: 'std_i r_i', healthy: '> 0', moves: '0: no learning signal', unit: '', chart: 'reward', per: 'rollout' },
  { name: 'rewards/<fn>/mean', doc: 'Mean of one reward function over the batch.', formula: 'mean_i r_fn(i)', healthy: 'rises', moves: 'falls: that part of the task is unlearned', unit: '', chart: 'rewards', per: 'rollout' },
];

/** The catalog entry of a metric name: an exact entry, else a template whose `<...>` segments match one path segment each. */
export function metricSpec(name: string): MetricSpec | undefined {
  return METRICS.find((m) => m.name === name) ?? METRICS.find((m) => m.name.includes('<') && new RegExp(`^${m.name.split(/<[a-z]+>/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`).test(name));
}
