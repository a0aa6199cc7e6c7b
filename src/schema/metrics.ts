// The metric catalog: every metric the trainer emits, declared once with what it measures, its formula, its
// healthy range, what a move means, its unit, the chart it is drawn on, and its names in TRL, verl and OpenRLHF.
// Charts, tooltips, the CSV header, the engine's progress, imports of other files and docs/metrics.md read it.
// A leaf module (no imports), so every layer from the kernels' twins up to the UI can name metrics through it.

/** One update per batch (num_iterations 1, one minibatch): pi_theta is pi_old on every token, so rho = 1. */
const ONE_UPDATE = [
  { knob: 'num_iterations', is: [1] },
  { knob: 'num_minibatches', is: [1] },
] as const;
const NO_CRITIC = [{ knob: 'adv_estimator', not: ['gae'] }] as const;
/** No teacher checkpoint, no teachers by prompt source and no self-distillation: nothing distills. */
const NO_TEACHER = [
  { knob: 'teacher', is: [null] },
  { knob: 'teachers', is: [null] },
  { knob: 'self_distill', is: [false] },
] as const;

/** The charts of the lab, in page order. Every metric is drawn on exactly one. */
export const CHARTS = [
  {
    id: 'reward',
    title: 'Reward and accuracy',
    y: 'reward',
    log: 'never',
    band: { mean: 'reward', std: 'reward_std' },
  },
  {
    id: 'groups',
    title: 'Group signal',
    y: 'fraction',
    log: 'never',
    stack: ['groups/all_fail_frac', 'groups/mixed_frac', 'groups/all_pass_frac'],
    note: 'only mixed groups (some completions pass, some fail) carry a group-relative learning signal',
    noteLesson: 'dead-groups',
  },
  { id: 'entropy', title: 'Entropy', y: 'nats', log: 'off' },
  {
    id: 'clip',
    title: 'Clip ratio',
    y: 'fraction of tokens',
    log: 'off',
    note: 'tokens whose ratio rho left the clip range; they pass no gradient',
    quiet: [
      {
        when: ONE_UPDATE,
        kind: 'zero',
        why: 'one update per batch, so every ratio rho = pi_theta / pi_old is 1 and nothing can clip',
        lesson: 'clip-zero',
      },
      { when: [{ knob: 'loss_type', is: ['pg', 'sapo'] }], kind: 'off', why: 'this loss has no clip' },
    ],
  },
  {
    id: 'kl',
    title: 'KL',
    y: 'nats',
    log: 'off',
    quiet: [
      {
        when: [{ knob: 'beta', is: [0] }],
        metrics: ['kl', 'kl/exact'],
        kind: 'off',
        why: 'no reference model to measure against',
      },
      {
        when: ONE_UPDATE,
        metrics: ['approx_kl'],
        kind: 'zero',
        why: 'one update per batch, so pi_theta is pi_old when it is measured',
        lesson: 'clip-zero',
      },
      {
        when: NO_TEACHER,
        metrics: ['distill/reverse_kl'],
        kind: 'off',
        why: 'no teacher to distill from',
      },
    ],
  },
  { id: 'lengths', title: 'Completion length', y: 'tokens', log: 'never' },
  {
    id: 'length_percentiles',
    title: 'Completion length percentiles',
    y: 'tokens',
    log: 'never',
    note: "p10, median and p90 of the step's lengths: a widening spread means some completions run long or stop early",
  },
  {
    id: 'fractions',
    title: 'Clipped and zero-signal fractions',
    y: 'fraction',
    log: 'never',
    note: 'frac_reward_zero_std: groups with all-equal rewards; their advantages are 0, so they teach nothing',
    noteLesson: 'dead-groups',
    quiet: [
      {
        when: [{ knob: 'dynamic_sampling', is: [false] }],
        metrics: ['dynamic_sampling/filtered_frac'],
        kind: 'off',
        why: 'no group is refilled',
      },
      {
        when: NO_TEACHER,
        metrics: ['distill/adv_share'],
        kind: 'off',
        why: 'no teacher to distill from',
      },
    ],
  },
  {
    id: 'loss',
    title: 'Policy loss',
    y: 'loss',
    log: 'never',
    note: 'near 0 by design: advantages are zero-mean within each group, so the loss averages to about 0 while its gradient is not 0',
    noteLesson: 'dead-groups',
    quiet: [{ when: NO_CRITIC, metrics: ['value_loss'], kind: 'off', why: 'only GAE trains a critic' }],
  },
  {
    id: 'grad',
    title: 'Gradient norm',
    y: 'L2 norm',
    log: 'on',
    quiet: [{ when: NO_CRITIC, metrics: ['critic/grad_norm'], kind: 'off', why: 'only GAE trains a critic' }],
  },
  {
    id: 'lr',
    title: 'Learning rate and entropy coefficient',
    y: 'value',
    log: 'off',
    quiet: [
      {
        when: [
          { knob: 'entropy_coef', is: [0] },
          { knob: 'entropy_target', is: [null] },
        ],
        metrics: ['entropy_coef'],
        kind: 'off',
        why: 'no entropy bonus',
      },
    ],
  },
  {
    id: 'sampling',
    title: 'Sampler vs trainer mismatch',
    y: 'nats, ratio or steps',
    log: 'off',
    note: 'the same kernels sample and train, so only float rounding differs, unless rollout_dtype has the sampler read bf16/f16 weights, max_staleness / weight_sync_steps older ones, or rollout_logprobs filtered log-probs; mismatch_kl is the early warning of off-policy collapse',
  },
  {
    id: 'rollout_correction',
    title: 'Rollout correction',
    y: 'weight or fraction of tokens',
    log: 'never',
    note: 'how much of the loss the sampler/trainer correction and the off-policy mask reweigh or drop',
    quiet: [
      {
        when: [
          { knob: 'rollout_is_mode', is: ['off'] },
          { knob: 'tis_cap', is: [null] },
        ],
        metrics: [
          'sampling/importance_sampling_ratio/mean',
          'rollout_correction/truncated_frac',
          'rollout_correction/masked_frac',
        ],
        kind: 'off',
        why: 'no rollout correction (rollout_is_mode off, tis_cap unset)',
      },
      {
        when: [{ knob: 'off_policy_mask_threshold', is: [null] }],
        metrics: ['off_policy_mask/masked_frac'],
        kind: 'off',
        why: 'no off-policy mask',
      },
    ],
  },
  { id: 'rewards', title: 'Reward functions', y: 'reward', log: 'never' },
  {
    id: 'selection',
    title: 'Token selection',
    y: 'fraction of tokens',
    log: 'never',
    quiet: [
      {
        when: [
          { knob: 'top_entropy_quantile', is: [1] },
          { knob: 'clip_cov_ratio', is: [0] },
          { knob: 'kl_cov_ratio', is: [0] },
        ],
        kind: 'off',
        why: 'every loss token is kept as is',
      },
    ],
  },
  {
    id: 'critic',
    title: 'Critic',
    y: 'value',
    log: 'off',
    quiet: [{ when: NO_CRITIC, kind: 'off', why: 'only GAE, the ppo preset, trains a critic' }],
  },
  {
    id: 'curriculum',
    title: 'Curriculum',
    y: 'difficulty',
    log: 'never',
    quiet: [
      {
        when: [{ knob: 'curriculum', is: ['fixed'] }],
        kind: 'off',
        why: 'every step samples the configured difficulty',
      },
    ],
  },
  {
    id: 'weights',
    title: 'Weight updates',
    y: '||W - W_0|| / ||W_0||',
    log: 'on',
    note: 'which weights RL moves, one line per matrix; the weight-update heatmap shows the same by step',
    quiet: [{ when: [{ knob: 'weight_stats_every', is: [0] }], kind: 'off', why: 'weight_stats_every is 0' }],
  },
  {
    id: 'rank1',
    title: 'Rank-1 share of the update',
    y: 'fraction of ||W - W_0||^2',
    log: 'never',
    note: "1: the matrix's whole update is one outer product u v^T",
    quiet: [{ when: [{ knob: 'weight_stats_every', is: [0] }], kind: 'off', why: 'weight_stats_every is 0' }],
  },
  { id: 'tokens', title: 'Tokens', y: 'tokens', log: 'off' },
  { id: 'throughput', title: 'Throughput', y: 'tokens / s', log: 'on' },
  { id: 'time', title: 'Time', y: 'seconds', log: 'on' },
] as const satisfies readonly ChartFamily[];

/** A config value a condition compares with (the catalog is a leaf module: knobs are named, not typed). */
export type KnobValue = string | number | boolean | null;

/** A condition on one config knob: its value is one of `is`, or none of `not`. */
export type KnobCondition = { knob: string; is: readonly KnobValue[] } | { knob: string; not: readonly KnobValue[] };

/**
 * When some of a chart's metrics say nothing in a run, because of its config: the feature is off ('off'), or the
 * values are 0 by construction ('zero'). The chart says so, naming the knobs, instead of drawing a flat line.
 */
export interface ChartQuiet {
  /** Every condition holds. */
  when: readonly KnobCondition[];
  /** The metrics it silences (catalog names); absent: all of the chart's. */
  metrics?: readonly string[];
  kind: 'off' | 'zero';
  /** Why, in a few words, for the reader. */
  why: string;
  /** The id of the lesson that shows why (src/lessons/catalog/), linked from the chart's note. */
  lesson?: string;
}

/** One chart: its title, what its y axis counts, its log-scale default, and an optional mean ± std band. */
export interface ChartFamily {
  id: string;
  /** Unique among the charts, ignoring case. */
  title: string;
  /** The y-axis label. */
  y: string;
  /** Log scale: 'on' by default, 'off' by default but offered, or never offered (values cross zero). */
  log: 'on' | 'off' | 'never';
  /** Draw mean ± std as a band (reward ± reward_std). */
  band?: { mean: string; std: string };
  /** A line under the title answering the question its values raise most often. */
  note?: string;
  /** The id of the lesson that answers the note's question at length, linked from it. */
  noteLesson?: string;
  /** Metrics drawn as areas stacked in this order (fractions of one whole); the chart's other metrics are lines. */
  stack?: readonly string[];
  /** When some or all of its metrics carry no signal in a run, and why. */
  quiet?: readonly ChartQuiet[];
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
  /**
   * The values it can take, where its unit does not say (UNIT_RANGES): its chart's axis stays inside them unless the
   * values leave them (a band around it may). Either end may be infinite.
   */
  range?: readonly [number, number];
  /** The chart it is drawn on. */
  chart: ChartId;
  /** 'rollout': one value per rollout step (repeated on each of its optimizer steps); 'update': one per optimizer step. */
  per: 'rollout' | 'update';
  /** When it is emitted (absent: always). */
  when?: string;
  /**
   * The same quantity's name in other trainers' logs, where one exists (TRL: GRPOTrainer's unless `compare` says
   * PPOTrainer; W&B shows TRL's and OpenRLHF's under a train/ prefix).
   */
  trl?: string;
  verl?: string;
  openrlhf?: string;
  /** prime-rl's name (its trainer's W&B keys). */
  primeRl?: string;
  /** How those trainers' quantity differs from this one, where it does (estimator, aggregation, when logged). */
  compare?: string;
  /**
   * Names this metric had in earlier RL Lab files; they import under the current name, their values multiplied
   * by `scale` (default 1) where the unit changed (perf/step_ms in milliseconds became step_time in seconds: 0.001).
   */
  formerly?: readonly { name: string; scale?: number }[];
  /** When a value of this metric is a warning sign the lab tells the person about (src/rl/observation/alerts.ts watches for it). */
  alert?: MetricAlert;
}

/**
 * A metric's alarm: the condition, its threshold and how long it must hold, why it usually happens, and the knob that
 * usually helps. Each rollout step counts with its worst value over its optimizer steps (the highest for 'high', the
 * lowest for 'low').
 */
export interface MetricAlert {
  /** The condition's name ("entropy collapse"). */
  title: string;
  /** 'high': value >= threshold; 'low': value <= threshold; 'flat': the value moved by at most threshold over `steps` rollout steps. */
  direction: 'high' | 'low' | 'flat';
  threshold: number;
  /** Consecutive rollout steps the condition must hold before it fires (once, until it clears). */
  steps: number;
  /** The likely cause, in a sentence. */
  cause: string;
  /** The knob that usually helps, in a sentence naming config fields. */
  knob: string;
  /** The id of the lesson that shows this condition, where there is one. */
  lesson?: string;
}

// ---------------------------------------------------------------------------------------------------------
// The catalog. Order: by chart in CHARTS order, the most read metric first; the CSV header and docs/metrics.md
// follow it. Notation (docs/algorithms.md#notation, in ASCII): N = B*G completions y_i per rollout step, G per
// group; m_{i,t} the loss mask; |y_i| = sum_t m_{i,t}; M = sum_{i,t} m_{i,t} over one optimizer step's sequences;
// len(y_i) the tokens sampled, EOS included; rho the importance ratio; A the advantage; tau the temperature.

export const METRICS = [
  // Reward and accuracy
  {
    name: 'reward',
    doc: "Mean reward of the rollout step's sampled completions, after overlong shaping: the number training pushes up.",
    formula: '(1/N) sum_i r_i,  r_i = sum_k w_k R_k(x, y_i) (+ the overlong penalty under overlong_buffer_enable)',
    healthy:
      "Rises over the run from about the warm start's accuracy (0.2-0.6 on the shipped checkpoints); within [0, 1] (down to -1 with overlong shaping).",
    moves:
      'Rising: the policy learns. Flat: no signal (see frac_reward_zero_std) or too small a learning rate. Falling after a rise: collapse or a reward part being gamed; look at entropy and rewards/<fn>/mean.',
    unit: 'reward',
    range: [0, 1],
    chart: 'reward',
    per: 'rollout',
    alert: {
      title: 'reward stuck',
      direction: 'flat',
      threshold: 1e-9,
      steps: 10,
      cause:
        'The reward has not moved at all for 10 rollout steps: every completion succeeds (the task is solved at this difficulty) or none does, and the same reward everywhere leaves nothing to learn from.',
      knob: 'Raise difficulty when it is stuck high; lower difficulty or raise temperature when it is stuck low.',
    },
    trl: 'reward',
    verl: 'critic/score/mean',
    openrlhf: 'reward',
  },
  {
    name: 'reward_std',
    doc: 'Mean over the groups of the standard deviation of the rewards within a group: how much the G completions of one prompt disagree (the band around reward).',
    formula: '(1/B) sum_b std_{i in group b} r_i,  std unbiased (divides by G - 1)',
    healthy: "Clearly above 0 (0.1-0.4 on this lab's 0/1 accuracy rewards): groups hold both successes and failures.",
    moves:
      'Falling toward 0: groups become uniform and group-relative advantages vanish. With high reward the task is solved at this difficulty (raise it); with low reward the policy never succeeds (lower difficulty or raise temperature).',
    unit: 'reward',
    range: [0, Infinity],
    chart: 'reward',
    per: 'rollout',
    trl: 'reward_std',
  },
  {
    name: 'accuracy',
    doc: "Mean of the task's accuracy reward over the rollout step's completions: the fraction judged correct (the bandit: its arm's reward).",
    formula: '(1/N) sum_i R_accuracy(x, y_i)',
    healthy:
      "Rises with reward from the warm start's level; on the shipped warm starts 0.2-0.6 at the start, and +10 points or more within 20 steps of 8 x 8 on copy.",
    moves:
      'Rising with reward: real progress. Reward rising while accuracy stays flat: the policy is collecting the format reward only. Falling: the update is too large (learning rate, num_iterations) or the reference pulls back.',
    unit: 'fraction',
    chart: 'reward',
    per: 'rollout',
  },
  {
    name: 'avg_correctness',
    doc: "The RLHF book's avg_correctness: the mean graded correctness of the rollout step's completions. A task that grades partial answers scores a `correctness` part (spell_backward: reasoning-gym's score_answer, 1 exact, else the share of positions right); on any other task it is the accuracy part.",
    formula: '(1/N) sum_i R_correctness(x, y_i)   (R_accuracy where the task has no correctness part)',
    healthy: 'At or above accuracy (partial credit only adds); rising with reward.',
    moves:
      'Rising while accuracy stays flat: answers get closer without becoming exact (most letters right on spell_backward).',
    unit: 'fraction',
    chart: 'reward',
    per: 'rollout',
  },
  {
    name: 'avg_format',
    doc: "The RLHF book's avg_format: the mean of the task's format part over the rollout step's completions (well-formed answers: one lowercase word on spell_backward, the think/answer tags under answer_format think).",
    formula: '(1/N) sum_i R_format(x, y_i)',
    healthy: 'Near 1 after a few steps from a warm start; the format is easier than the answer.',
    moves: 'Falling: the policy drifts off the answer form (check entropy and the completions in the inspector).',
    unit: 'fraction',
    chart: 'reward',
    per: 'rollout',
  },

  // Group signal
  {
    name: 'groups/all_fail_frac',
    doc: "Fraction of the rollout step's groups in which no completion passes. A completion passes when the task's verifier judges it correct (its accuracy part is 1, whatever reward_weights makes of it; the bandit: the best arm) and it ended with EOS; the held-out pass@k counts by the same rule.",
    formula: '(1/B) #{b : no i in b passes},  i passes <=> R_accuracy(x, y_i) = 1 and y_i ended with EOS',
    healthy: 'Falling over the run; below about 0.5 once the warm start gets some prompts right.',
    moves:
      'Rising toward 1: the policy solves almost nothing at this difficulty, so group-relative advantages have nothing to pull toward (lower difficulty or raise temperature).',
    unit: 'fraction',
    chart: 'groups',
    per: 'rollout',
    compare: "verl's PRIME recipe logs the count batch/solve_none (a group reward <= 0), not a fraction",
  },
  {
    name: 'groups/mixed_frac',
    doc: "Fraction of the rollout step's groups in which some but not all completions pass: the groups whose group-relative advantages carry a pass/fail signal.",
    formula: '(1/B) #{b : 0 < #{i in b passes} < G}  (= 1 - all_fail_frac - all_pass_frac)',
    healthy: "Well above 0, ideally the largest share (0.3-0.8 on this lab's tasks with G = 8).",
    moves:
      'Falling toward 0: every group is uniform and GRPO-style training stalls; whether the rest went all-pass (solved: raise difficulty) or all-fail (too hard) says which way to move.',
    unit: 'fraction',
    chart: 'groups',
    per: 'rollout',
    compare:
      "TRL's frac_reward_zero_std counts groups whose rewards tie, which includes groups that pass or fail alike but differ in a format part; here a group is judged by pass/fail only",
  },
  {
    name: 'groups/all_pass_frac',
    doc: "Fraction of the rollout step's groups in which every completion passes (same rule as groups/all_fail_frac).",
    formula: '(1/B) #{b : every i in b passes}',
    healthy:
      'Rising slowly as the policy masters the task; below about 0.6 while there is still something to learn at this difficulty.',
    moves:
      'Near 1: the task is solved at this difficulty and the batch teaches nothing (raise difficulty, or use curriculum adaptive).',
    unit: 'fraction',
    chart: 'groups',
    per: 'rollout',
    compare: "verl's PRIME recipe logs the count batch/solve_all, not a fraction",
  },
  {
    name: 'groups/nonzero_adv_frac',
    doc: "Fraction of the rollout step's completions that carry a learning signal: at least one loss token with a non-zero advantage (a completion the mask drops entirely counts as zero).",
    formula: '(1/N) #{i : exists t with m_{i,t} = 1 and |A_{i,t}| > 1e-8}',
    healthy:
      'About 1 - frac_reward_zero_std under group estimators (GRPO, RLOO, Dr. GRPO); near 1 under batch-normalized ones (reinforce_pp, gae).',
    moves:
      'Falling: more groups tie and their completions train on nothing; above mixed_frac when a format part separates completions that pass or fail alike.',
    unit: 'fraction',
    chart: 'groups',
    per: 'rollout',
  },

  // Entropy
  {
    name: 'entropy',
    doc: "Mean entropy of pi_theta's next-token distribution over the loss tokens, over the whole vocabulary, at temperature tau.",
    formula:
      '(1/M) sum_{i,t} m_{i,t} H_{i,t},  H_{i,t} = -sum_v pi_theta(v | x, y_{i,<t}) log pi_theta(v | x, y_{i,<t})',
    healthy:
      "About 0.3-1.5 nats on this lab's tasks (the uniform distribution over the 99-token vocabulary has ln 99 = 4.6); drifts down slowly as the policy grows confident.",
    moves:
      'A fast fall toward 0 is entropy collapse: exploration ends and reward plateaus (epsilon_high, entropy_coef > 0 or top_entropy_quantile help). A rise toward ln V: the updates push the policy apart (lower the learning rate).',
    unit: 'nats',
    chart: 'entropy',
    per: 'update',
    alert: {
      title: 'entropy collapse',
      direction: 'low',
      threshold: 0.05,
      steps: 3,
      cause:
        'The policy has become almost deterministic on the tokens it samples, so the completions of a group stop differing and exploration ends.',
      knob: 'Raise epsilon_high (clip-higher, 0.28), set entropy_coef above 0 or an entropy_target, or lower learning_rate.',
      lesson: 'entropy-collapse',
    },
    trl: 'entropy',
    verl: 'actor/entropy',
    openrlhf: 'entropy_loss',
    compare:
      'verl aggregates by loss_agg_mode; OpenRLHF logs entropy_loss, the mean entropy, only when an entropy coefficient is set',
  },

  {
    name: 'entropy/top_decile_mean',
    doc: "Mean entropy of the highest-entropy tenth of the rollout step's loss tokens (the 'forking' or critical tokens where the policy still chooses), under the sampling distribution softmax(logits / tau).",
    formula:
      "(1/k) sum of the k = ceil(M/10) largest H_{i,t} over the tokens with m_{i,t} = 1,  H under pi_old at temperature tau (the rollout's entropies)",
    healthy:
      'Well above the mean entropy (typically 2-5 times it) and falling slowly; it is where exploration still happens.',
    moves:
      'Collapsing together with the mean: exploration is ending everywhere (entropy collapse). Holding while the mean falls: the policy is confident on routine tokens but still explores at the few decisions that matter, the healthy pattern.',
    unit: 'nats',
    chart: 'entropy',
    per: 'rollout',
  },

  // Clip ratio
  {
    name: 'clip_ratio/low_mean',
    doc: 'Fraction of loss tokens clipped at the lower bound: the ratio fell below 1 - eps_low on a token with negative advantage, so the token passes no gradient.',
    formula:
      '(1/M) sum_{i,t} m_{i,t} [rho_{i,t} < 1 - eps_low and A_{i,t} < 0]  (rho = s_i under GSPO; GMPO: its clipped log-ratio; 0 under sapo, pg and cispo)',
    healthy:
      'Exactly 0 with one update per batch (num_iterations 1, one minibatch): the policy that computes the loss is the one that sampled, so every ratio rho is 1 and nothing can clip; a few percent (below 0.1) with several.',
    moves:
      'Rising above about 0.2: the optimizer steps within a batch move the policy too far and many tokens stop learning (lower the learning rate or num_iterations).',
    unit: 'fraction',
    chart: 'clip',
    per: 'update',
    trl: 'clip_ratio/low_mean',
  },
  {
    name: 'clip_ratio/low_min',
    doc: "The smallest, over the optimizer step's sequences, of the fraction of a sequence's loss tokens clipped at the lower bound.",
    formula: 'min_i (1/|y_i|) sum_t m_{i,t} [rho_{i,t} < 1 - eps_low and A_{i,t} < 0]',
    healthy: 'Almost always 0: some sequence has no token clipped low.',
    moves: 'Above 0: every sequence of the step has tokens clipped low, so the policy moved far on all of them.',
    unit: 'fraction',
    chart: 'clip',
    per: 'update',
    trl: 'clip_ratio/low_min',
    compare: 'TRL averages the per-micro-batch minimum over the steps since its last log',
  },
  {
    name: 'clip_ratio/high_mean',
    doc: 'Fraction of loss tokens clipped at the upper bound: the ratio rose above 1 + eps_high on a token with positive advantage, so the token passes no gradient.',
    formula:
      '(1/M) sum_{i,t} m_{i,t} [rho_{i,t} > 1 + eps_high and A_{i,t} > 0]  (rho = s_i under GSPO; GMPO: its clipped log-ratio; 0 under sapo, pg and cispo)',
    healthy:
      'Exactly 0 with one update per batch; a few percent with several; smaller with clip-higher (epsilon_high 0.28).',
    moves:
      'Rising: positive-advantage tokens gain probability faster than the clip allows; with a collapsing entropy, raise epsilon_high (clip-higher) so rare good tokens can grow.',
    unit: 'fraction',
    chart: 'clip',
    per: 'update',
    trl: 'clip_ratio/high_mean',
  },
  {
    name: 'clip_ratio/high_max',
    doc: "The largest, over the optimizer step's sequences, of the fraction of a sequence's loss tokens clipped at the upper bound.",
    formula: 'max_i (1/|y_i|) sum_t m_{i,t} [rho_{i,t} > 1 + eps_high and A_{i,t} > 0]',
    healthy: '0 with one update per batch; below about 0.5 with several.',
    moves: 'Near 1: at least one sequence is clipped almost everywhere: its probability rose far since sampling.',
    unit: 'fraction',
    chart: 'clip',
    per: 'update',
    trl: 'clip_ratio/high_max',
  },
  {
    name: 'clip_ratio/region_mean',
    doc: 'Fraction of loss tokens clipped on either side: where the clipped branch of the PPO objective is active.',
    formula: 'clip_ratio/low_mean + clip_ratio/high_mean',
    healthy:
      'Exactly 0 with one update per batch (the most common surprise in GRPO runs: rho = 1, nothing can clip); below about 0.2 with several.',
    moves:
      'Rising: the policy moves too far within a batch (lower learning rate or num_iterations). Always 0 with num_iterations > 1: the clip never binds, epsilon may be wider than needed.',
    unit: 'fraction',
    chart: 'clip',
    per: 'update',
    alert: {
      title: 'clip ratio explosion',
      direction: 'high',
      threshold: 0.3,
      steps: 2,
      cause:
        'The optimizer steps within a batch move the policy so far that a large share of tokens sits outside the clip range and stops learning.',
      knob: 'Lower learning_rate or num_iterations (fewer passes over each batch).',
      lesson: 'clip-zero',
    },
    trl: 'clip_ratio/region_mean',
    verl: 'actor/pg_clipfrac',
    openrlhf: 'ppo_clip_ratio',
    compare:
      "verl's actor/pg_clipfrac_lower is not clip_ratio/low_mean: it counts the dual clip (clip_ratio_c) binding",
  },
  {
    name: 'cispo_clip_ratio',
    doc: "CISPO's share of loss tokens whose importance weight was capped at eps_max (their gradient still flows, scaled by eps_max); 0 under other losses.",
    formula: '(1/M) sum_{i,t} m_{i,t} [rho_{i,t} > eps_max]',
    healthy: '0 with one update per batch; rare (below 0.01) with eps_max 5.',
    moves:
      'Rising: tokens whose probability grew more than eps_max-fold since sampling: the updates within a batch move too far.',
    unit: 'fraction',
    chart: 'clip',
    per: 'update',
    trl: 'cispo_clip_ratio',
    compare: 'TRL counts only tokens with A > 0, and its cap is epsilon_high',
  },

  // KL
  {
    name: 'kl',
    doc: 'Mean of the configured KL estimator (kl_estimator) between pi_theta and the reference pi_ref over the loss tokens; 0 without a reference model (beta = 0).',
    formula:
      '(1/M) sum_{i,t} m_{i,t} k(u_{i,t}),  u = log pi_theta - log pi_ref;  k1 = u, k2 = u^2/2, k3 = e^{-u} - 1 + u, low_var_kl = clamp(k3, -10, 10), exact = kl/exact',
    healthy:
      "0 at the start, then a slow climb: below about 0.5 nats over a run of this lab's size with beta 0.01-0.05.",
    moves:
      'Growing fast: the policy leaves its start faster than beta holds it (raise beta, lower the learning rate). k1 can be negative on one batch: it is unbiased only on average.',
    unit: 'nats',
    chart: 'kl',
    per: 'update',
    trl: 'kl',
    verl: 'actor/kl_loss',
    openrlhf: 'kl',
    compare:
      'TRL: k3, logged only when beta > 0; verl logs actor/kl_loss for the KL in the loss and actor/reward_kl_penalty for the KL in the reward',
  },
  {
    name: 'kl/exact',
    doc: 'Mean exact KL(pi_theta || pi_ref) over the loss tokens, summed over the whole vocabulary at each token; 0 without a reference model (beta = 0).',
    formula: '(1/M) sum_{i,t} m_{i,t} sum_v pi_theta(v | .) (log pi_theta(v | .) - log pi_ref(v | .))',
    healthy: 'Never negative; close to kl and below about 0.5 nats.',
    moves:
      'Where kl and kl/exact part ways, the one-sample estimator is noisy at this batch size (or k1 is negative). Rising: the policy drifts from the reference.',
    unit: 'nats',
    chart: 'kl',
    per: 'update',
  },
  {
    name: 'distill/reverse_kl',
    doc: "On-policy distillation: the teacher-student KL per token, the one-sample estimate of KL(pi_S || pi_T) on the student's own samples (the teacher: the teacher checkpoint, or the policy with the demonstration in context under self_distill).",
    formula: '(1/M) sum_{i,t} m_{i,t} (log pi_S(y_{i,t} | c) - log pi_T(y_{i,t} | c)),  pi_S = pi_old',
    healthy:
      'Falls over a distilling run toward 0 as the student takes on the teacher; a few nats per token at the start from a fresh student.',
    moves:
      'Falling: the student imitates the teacher on its own samples. Flat: distill_coef too small for the learning rate, or the task advantage pulls elsewhere. Negative: the student is surer of its tokens than the teacher (a one-sample estimate may be, on one batch).',
    unit: 'nats',
    chart: 'kl',
    per: 'rollout',
    when: 'with a teacher or self_distill',
    compare:
      "prime-rl logs ref_kl = mean(log pi_ref - log pi), this metric's negative; Tinker's cookbook logs teacher_kl, the same per-token mean",
  },
  {
    name: 'distill/reverse_kl/<teacher>',
    doc: "Multi-teacher distillation: distill/reverse_kl over the completions of the prompts one teacher scores (its teacher_id in your prompt list; 'teacher' for the default teacher, which scores prompts with none), one series per teacher beside the overall one.",
    formula:
      "(1/M_k) sum_{i in rows of k, t} m_{i,t} (log pi_S(y_{i,t} | c) - log pi_{T_k}(y_{i,t} | c)),  M_k the loss tokens of k's rows",
    healthy: 'Each falls toward 0 as the student takes on that teacher on its prompts.',
    moves:
      "One falling while another holds: the student learns one source's teacher and not the other's (more of one source in the list, or a teacher far from the student). Absent at a step: no prompt of that teacher was drawn.",
    unit: 'nats',
    chart: 'kl',
    per: 'rollout',
    when: 'with teachers',
    compare:
      "TRL's AsyncDistillationTrainer logs teacher_jsd/<teacher_id> (its divergence per teacher) and teacher_score_s/<teacher_id>",
  },
  {
    name: 'distill/adv_share',
    doc: "On-policy distillation: the share of the advantage's magnitude that comes from the teacher's per-token signal rather than from the task reward's advantage.",
    formula:
      'sum_{i,t} m_{i,t} |lambda d_{i,t}| / sum_{i,t} m_{i,t} (|lambda d_{i,t}| + |A^task_{i,t}|),  d = log pi_T - log pi_S, lambda = distill_coef',
    healthy:
      '1 when distilling alone (every reward weight 0); between 0 and 1 when the reward and the teacher share the advantage.',
    moves:
      'Near 1 with a reward: the teacher drowns the reward (lower distill_coef). Near 0: the teacher barely speaks (its KL is small, or distill_coef is).',
    unit: 'fraction',
    range: [0, 1],
    chart: 'fractions',
    per: 'rollout',
    when: 'with a teacher or self_distill',
  },
  {
    name: 'approx_kl',
    doc: "How far this optimizer step's policy has moved from the one that sampled the batch: the k3 estimate of KL(pi_old || pi_theta) over the loss tokens.",
    formula: '(1/M) sum_{i,t} m_{i,t} ((rho_{i,t} - 1) - log rho_{i,t}),  rho = pi_theta / pi_old per token',
    healthy:
      '0 on the first optimizer step of a batch, where pi_theta is pi_old (exactly 0 with one update per batch); below about 0.05 on the later ones (num_iterations > 1 or several minibatches).',
    moves:
      'Above about 0.1: the steps within a batch move the policy too far and clipping does most of the work (lower the learning rate or num_iterations).',
    unit: 'nats',
    chart: 'kl',
    per: 'update',
    alert: {
      title: 'ratio explosion',
      direction: 'high',
      threshold: 0.5,
      steps: 1,
      cause:
        'Within one batch the policy moved ten times further from the one that sampled it than a healthy run does, so importance ratios are far from 1.',
      knob: 'Lower learning_rate or num_iterations; keep max_grad_norm on (1).',
      lesson: 'kl-estimators',
    },
    trl: 'policy/approxkl_avg',
    verl: 'actor/ppo_kl',
    openrlhf: 'ppo_kl',
    compare:
      "the same KL by other estimators: verl and OpenRLHF average k1 = log pi_old - log pi_theta, TRL's PPOTrainer (its GRPOTrainer has none) averages (log rho)^2 / 2",
  },

  // Completion length
  {
    name: 'completions/mean_length',
    doc: "Mean length of the rollout step's sampled completions in tokens, EOS included.",
    formula: '(1/N) sum_i len(y_i),  len(y_i) = tokens sampled for y_i, EOS included',
    healthy:
      "A little above the task's answer length and stable (copy at difficulty 3: about 4 tokens, 3 characters and EOS).",
    moves:
      'Growing toward L_max: the policy fails to stop (watch completions/clipped_ratio). Collapsing toward 1: it emits EOS at once.',
    unit: 'tokens',
    chart: 'lengths',
    per: 'rollout',
    trl: 'completions/mean_length',
    verl: 'response_length/mean',
    openrlhf: 'response_length',
  },
  {
    name: 'completions/min_length',
    doc: 'Length of the shortest completion of the rollout step, EOS included.',
    formula: 'min_i len(y_i)',
    healthy: 'Near the shortest correct answer; 1 means some completion was a bare EOS.',
    moves: 'Dropping to 1 and staying: the policy learned to stop early on some prompts.',
    unit: 'tokens',
    chart: 'lengths',
    per: 'rollout',
    trl: 'completions/min_length',
    verl: 'response_length/min',
  },
  {
    name: 'completions/max_length',
    doc: 'Length of the longest completion of the rollout step, EOS included.',
    formula: 'max_i len(y_i)',
    healthy: 'Below L_max (max_completion_length).',
    moves: 'Pinned at L_max: some completion was cut off (see completions/clipped_ratio).',
    unit: 'tokens',
    chart: 'lengths',
    per: 'rollout',
    trl: 'completions/max_length',
    verl: 'response_length/max',
  },
  {
    name: 'completions/mean_terminated_length',
    doc: 'Mean length of the completions that ended with EOS (the truncated ones left out); 0 when none did.',
    formula: '(1/|T|) sum_{i in T} len(y_i),  T = the completions that ended with EOS',
    healthy: 'Equal to completions/mean_length while nothing is truncated.',
    moves: 'Below mean_length: truncated completions pull the mean up; the finished answers are shorter.',
    unit: 'tokens',
    chart: 'lengths',
    per: 'rollout',
    trl: 'completions/mean_terminated_length',
  },
  {
    name: 'completions/min_terminated_length',
    doc: 'Length of the shortest completion that ended with EOS; 0 when none did.',
    formula: 'min_{i in T} len(y_i)',
    healthy: 'Equal to completions/min_length while nothing is truncated.',
    moves:
      'Read with min_length: a gap means the shortest completions were cut off, which only happens when L_max is tiny.',
    unit: 'tokens',
    chart: 'lengths',
    per: 'rollout',
    trl: 'completions/min_terminated_length',
  },
  {
    name: 'completions/max_terminated_length',
    doc: 'Length of the longest completion that ended with EOS; 0 when none did.',
    formula: 'max_{i in T} len(y_i)',
    healthy: 'Below L_max, near the longest correct answer.',
    moves: 'Below max_length: the longest completions were cut off, not finished.',
    unit: 'tokens',
    chart: 'lengths',
    per: 'rollout',
    trl: 'completions/max_terminated_length',
  },

  // Completion length percentiles
  {
    name: 'completions/p10_length',
    doc: "10th percentile of the rollout step's completion lengths, EOS included.",
    formula: "quantile_0.1 of len(y_i) over the N completions, linear interpolation between ranks (NumPy's default)",
    healthy: 'Near the shortest correct answer; close to the median on tasks with one answer length.',
    moves: 'Falling away from the median: a growing share of completions stops early.',
    unit: 'tokens',
    chart: 'length_percentiles',
    per: 'rollout',
  },
  {
    name: 'completions/p50_length',
    doc: "Median of the rollout step's completion lengths, EOS included: the typical length, unmoved by a few runaway completions.",
    formula: 'quantile_0.5 of len(y_i) over the N completions, linear interpolation between ranks',
    healthy: 'Near the answer length and stable.',
    moves:
      'Mean rising while the median holds: a few completions run long (see p90 and clipped_ratio). Both rising: the whole policy lengthens its answers.',
    unit: 'tokens',
    chart: 'length_percentiles',
    per: 'rollout',
  },
  {
    name: 'completions/p90_length',
    doc: "90th percentile of the rollout step's completion lengths, EOS included.",
    formula: 'quantile_0.9 of len(y_i) over the N completions, linear interpolation between ranks',
    healthy: 'Below L_max (max_completion_length).',
    moves: 'Climbing to L_max: the longest tenth of the completions stops ending (watch completions/clipped_ratio).',
    unit: 'tokens',
    chart: 'length_percentiles',
    per: 'rollout',
  },

  // Clipped and zero-signal fractions
  {
    name: 'completions/clipped_ratio',
    doc: "Fraction of the rollout step's completions cut at L_max without an EOS (truncated).",
    formula: '(1/N) #{i : y_i has no EOS}',
    healthy: "0 on this lab's tasks (L_max sits just above the longest correct answer); below 0.05.",
    moves:
      'Rising: the policy stops ending its answers. Overlong shaping then lowers their reward; mask_truncated_completions drops them from the loss.',
    unit: 'fraction',
    chart: 'fractions',
    per: 'rollout',
    alert: {
      title: 'lengths pinned at the cap',
      direction: 'high',
      threshold: 0.9,
      steps: 3,
      cause:
        'Almost every completion runs to max_completion_length without EOS: the policy lost its stop token, or the answers need more room.',
      knob: 'Raise max_completion_length, or turn on overlong_buffer_enable or mask_truncated_completions.',
      lesson: 'length-bias',
    },
    trl: 'completions/clipped_ratio',
    verl: 'response_length/clip_ratio',
    openrlhf: 'rollout/truncated_rate',
  },
  {
    name: 'frac_reward_zero_std',
    doc: 'Fraction of groups whose G rewards are all equal (all right or all wrong): their group-relative advantages (GRPO, RLOO, Dr. GRPO) are all 0, so those groups teach nothing.',
    formula: '(1/B) #{b : max_{i in b} r_i - min_{i in b} r_i <= 1e-8}',
    healthy:
      "Below about 0.6: this lab's small groups (G = 4-8) on 0/1 rewards often sit at 0.2-0.6; larger groups read lower.",
    moves:
      'Rising toward 1: the batch stops teaching. All groups right: raise the difficulty. All wrong: lower it or raise the temperature. dynamic_sampling refills such groups.',
    unit: 'fraction',
    chart: 'fractions',
    per: 'rollout',
    alert: {
      title: 'every group zero-signal',
      direction: 'high',
      threshold: 1,
      steps: 5,
      cause:
        "Every group's completions got the same reward, so every group-relative advantage is 0 and the reward trains nothing (only a distillation teacher's per-token term, distill/adv_share, still moves the policy).",
      knob: 'Move difficulty (down when reward is 0, up when it is 1), raise temperature or num_generations, or turn on dynamic_sampling.',
      lesson: 'dead-groups',
    },
    trl: 'frac_reward_zero_std',
  },
  {
    name: 'frac_reward_zero_mean',
    doc: 'Fraction of groups whose mean reward is 0 (with 0/1 rewards: every completion failed). MaxRL divides by the mean and gives such a group no advantage at all; under any group estimator it teaches nothing.',
    formula: '(1/B) #{b : |mean_{i in b} r_i| <= 1e-8}',
    healthy:
      'Below frac_reward_zero_std (it counts only the all-wrong part of the all-equal groups); near 0 once the task is partly solved.',
    moves:
      'Near 1: almost every prompt is failed by all G completions; lower the difficulty or raise temperature or num_generations.',
    unit: 'fraction',
    chart: 'fractions',
    per: 'rollout',
    trl: 'frac_reward_zero_mean',
  },
  {
    name: 'dynamic_sampling/filtered_frac',
    doc: 'Fraction of the groups sampled in this rollout step that dynamic sampling dropped for having all-equal rewards; 0 when dynamic_sampling is off.',
    formula:
      'groups dropped / groups sampled, over every batch of prompts drawn this step (at most 1 + max_resample batches)',
    healthy: '0 with dynamic_sampling off; with it on, about what frac_reward_zero_std would read (0.2-0.6 here).',
    moves:
      'Near 1: almost every group is uniform, sampling is mostly wasted, and the step trains on the few groups that survive (or on the last batch as is).',
    unit: 'fraction',
    chart: 'fractions',
    per: 'rollout',
  },

  // Loss
  {
    name: 'policy_loss',
    doc: 'The policy part of the objective at this optimizer step, aggregated by loss_agg_mode (without the KL term and the entropy bonus).',
    formula:
      "sum_{i,t} w_{i,t} m_{i,t} l_{i,t},  w = 1/M (token-mean), 1/(N |y_i|) (seq-mean-token-mean), 1/N (seq-mean-token-sum), 1/(N L_max) (seq-mean-token-sum-norm), N the step's sequences",
    healthy:
      "Near 0 and noisy, by construction (the most asked question about GRPO's loss): group-relative advantages are zero-mean within each group and rho = 1 on the first update, so the terms -rho A average to about 0; the gradient, sum A grad log pi_theta, is not 0. Its level is not a learning curve.",
    moves:
      'Watch reward, not this. Large swings: large advantages or ratios in the batch. A drift away from 0 on later optimizer steps of a batch: the ratio moves.',
    unit: '',
    chart: 'loss',
    per: 'update',
    trl: 'policy_loss',
    verl: 'actor/pg_loss',
    openrlhf: 'policy_loss',
    compare: 'TRL logs policy_loss only when the entropy bonus is on',
  },
  {
    name: 'loss',
    doc: "The whole objective this optimizer step minimizes for the policy: the policy loss plus the KL term (kl_placement in_loss) minus the entropy bonus; the critic's value loss is not in it.",
    formula: 'sum_{i,t} w_{i,t} m_{i,t} (l_{i,t} + beta k_{i,t} - alpha H_{i,t})',
    healthy: 'About policy_loss, plus beta x kl when the KL is in the loss, minus alpha x entropy; near 0.',
    moves: 'Read it like policy_loss; its gap from policy_loss is the KL term and the entropy bonus.',
    unit: '',
    chart: 'loss',
    per: 'update',
    trl: 'loss',
    compare: "TRL's is the Trainer's loss averaged over the steps since its last log",
  },
  {
    name: 'value_loss',
    doc: "PPO's clipped value loss of the critic at this optimizer step, token mean over the loss tokens, before weighting by vf_coef.",
    formula: '(1/M) sum_{i,t} m_{i,t} 0.5 max((V - R)^2, (clip(V, V_old - eps_v, V_old + eps_v) - R)^2)',
    healthy:
      "Falls within tens of steps from its first value (the critic starts at V = 0); small (below 0.1) on this lab's 0/1 rewards.",
    moves:
      'Rising: the returns change faster than the critic follows (raise critic_learning_rate or vf_coef). Flat and high: the critic cannot predict the reward from the text.',
    unit: '',
    chart: 'loss',
    per: 'update',
    when: 'with adv_estimator gae (the ppo preset)',
    trl: 'loss/value_avg',
    verl: 'critic/vf_loss',
    openrlhf: 'critic_loss',
    compare: 'TRL: its PPOTrainer',
  },

  // Gradient norm
  {
    name: 'grad_norm',
    doc: "Global L2 norm of the policy's gradient at this optimizer step, before clipping to max_grad_norm.",
    formula: '||grad_theta loss||_2 over every parameter of the policy',
    healthy: 'About 0.1-3 on the nano model; max_grad_norm (default 1) scales larger gradients down to it.',
    moves:
      'Spikes: a batch with large advantages or ratios. A steady rise: training destabilizes (lower the learning rate). Near 0: no signal (every advantage 0).',
    unit: '',
    chart: 'grad',
    per: 'update',
    trl: 'grad_norm',
    verl: 'actor/grad_norm',
    openrlhf: 'actor_grad_norm',
  },
  {
    name: 'critic/grad_norm',
    doc: "Global L2 norm of the critic's gradient (vf_coef times the value loss's) at this optimizer step, before clipping to max_grad_norm.",
    formula: '||grad_phi vf_coef value_loss||_2 over every parameter of the critic',
    healthy: "Well below the policy's grad_norm (vf_coef 0.1 scales it): about 0.01-0.3.",
    moves: 'Spikes when the returns jump (reward suddenly rises); near 0 once the critic predicts the returns.',
    unit: '',
    chart: 'grad',
    per: 'update',
    when: 'with adv_estimator gae (the ppo preset)',
    verl: 'critic/grad_norm',
    openrlhf: 'critic_grad_norm',
  },

  // Learning rate and entropy coefficient
  {
    name: 'learning_rate',
    doc: "The policy's AdamW learning rate at this optimizer step, after warmup and schedule.",
    formula:
      't <= warmup_steps: lr t / warmup_steps; then constant lr, cosine lr (1 + cos(pi p)) / 2 or linear lr (1 - p), p = (t - warmup_steps) / (T - warmup_steps), T optimizer steps in all',
    healthy: "As configured: 3e-4 by default, 1e-3 in this lab's quick examples.",
    moves: 'It moves only by its schedule; compare its shape with reward to see whether a decay came too early.',
    unit: '',
    chart: 'lr',
    per: 'update',
    trl: 'learning_rate',
    verl: 'actor/lr',
    openrlhf: 'actor_lr',
  },
  {
    name: 'entropy_coef',
    doc: 'The entropy bonus coefficient alpha applied at this rollout step (it moves under adaptive entropy, entropy_target; 0 while entropy_bonus_gate holds it back).',
    formula:
      'alpha <- clamp(alpha + entropy_coef_step (mean H <= entropy_target ? 1 : -1), entropy_coef_min, entropy_coef_max) after each rollout step; applied: alpha, or 0 under entropy_bonus_gate while the last mean H > entropy_target',
    healthy:
      'Constant (0 by default) unless entropy_target is set; then it rises while entropy is below the target and falls while above.',
    moves:
      'Climbing steadily: entropy stays below the target despite the bonus (the target may be too high for this task).',
    unit: '',
    chart: 'lr',
    per: 'rollout',
    trl: 'entropy_coef',
  },

  // Sampler vs trainer log-prob gap
  {
    name: 'sampling/sampling_logp_difference/mean',
    doc: "Mean absolute gap between the trainer's log pi_old and the sampler's log-probability of each sampled token: the train/inference mismatch.",
    formula: '(1/M) sum_{i,t} m_{i,t} |log pi_old(y_{i,t}) - log pi_sampler(y_{i,t})|',
    healthy:
      'About 1e-7 or exactly 0: the sampler and the trainer run the same kernels on the same f32 weights, so only float rounding differs (a LoRA run with rollout_merge_lora: 4e-7 to 7e-7 on the addition task, the sampler reading W + s B A merged); above 1e-4 is a bug unless the sampler runs in half precision. With rollout_dtype bf16 the sampler reads rounded weights: about 1e-3 on the small presets (f16: 5 to 10 times less), a merged LoRA copy in bf16 too; weight_dtype bf16/f16 also stores the KV cache of rollouts half, which moves it too.',
    moves:
      'A jump: the sampler and the trainer disagree (different kernels, precision or temperature handling). rollout_is_mode (or tis_cap) corrects the loss for the gap.',
    unit: 'nats',
    chart: 'sampling',
    per: 'update',
    trl: 'sampling/sampling_logp_difference/mean',
    formerly: [{ name: 'sampling/logp_diff/mean' }],
    compare:
      "TRL logs it only with vLLM and its importance-sampling correction, as a mean of per-process means; verl's training/rollout_probs_diff_mean compares probabilities, not log-probabilities",
  },
  {
    name: 'sampling/sampling_logp_difference/max',
    doc: "Largest absolute gap, over the loss tokens, between the trainer's log pi_old and the sampler's log-probability.",
    formula: 'max_{i,t : m_{i,t} = 1} |log pi_old(y_{i,t}) - log pi_sampler(y_{i,t})|',
    healthy:
      'Below about 1e-6 (float rounding only; up to about 1e-5 with rollout_merge_lora); with rollout_dtype bf16, 0.004 to 0.02 on the small presets.',
    moves:
      'A spike with a small mean: a few tokens disagree, usually near-tied logits where rounding flips which is larger.',
    unit: 'nats',
    chart: 'sampling',
    per: 'update',
    trl: 'sampling/sampling_logp_difference/max',
    formerly: [{ name: 'sampling/logp_diff/max' }],
  },

  // Sampler/learner mismatch diagnostics (src/reference/mismatch-diagnostics.ts, docs/algorithms.md#mismatch-diagnostics)
  {
    name: 'mismatch_kl/mean',
    doc: "Mean over the loss tokens of the k3 estimate of KL(mu || pi_old) between the sampler mu and the learner's pi_old: prime-rl's early warning of off-policy collapse.",
    formula: '(1/M) sum_{i,t} m_{i,t} (rho - log rho - 1),  rho = pi_old(y_{i,t}) / mu(y_{i,t})',
    healthy:
      'Below 1e-6 with an f32 sampler on the current weights; about 1e-6 to 1e-5 with rollout_dtype bf16; it grows with max_staleness as the learner moves away from the weights that sampled.',
    moves:
      'A sustained, growing mean: the sampler and the learner drift apart (stale weights, a high learning rate); prime-rl reads it as the sign of coming off-policy collapse. Lower max_staleness or turn on a rollout correction.',
    unit: 'nats',
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    verl: 'rollout_corr/k3_kl',
    primeRl: 'mismatch_kl/all/mean',
    compare:
      "prime-rl measures it against the learner's forward at each micro-step (pi_theta; the same as pi_old on the first); verl's k3_kl is the same mean",
  },
  {
    name: 'mismatch_kl/std',
    doc: "Standard deviation over the loss tokens of the per-token mismatch KL (unbiased, as torch's std).",
    formula: 'sqrt( (1/(M-1)) sum_{i,t} m_{i,t} (k_{i,t} - mean k)^2 ),  k = rho - log rho - 1',
    healthy: 'Of the order of the mean or below; absent with one loss token.',
    moves: 'Far above the mean: a few tokens carry the mismatch (near-tied logits, tokens the update moved most).',
    unit: 'nats',
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    primeRl: 'mismatch_kl/all/std',
  },
  {
    name: 'mismatch_kl/max',
    doc: 'Largest per-token mismatch KL over the loss tokens.',
    formula: 'max_{i,t : m_{i,t} = 1} (rho - log rho - 1)',
    healthy: 'Below about 1e-3 on-policy; a stale sampler reaches 0.1 and more.',
    moves: 'A spike: one token whose probability the learner moved far from what the sampler saw.',
    unit: 'nats',
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    primeRl: 'mismatch_kl/all/max',
  },
  {
    name: 'rollout_corr/rollout_is_eff_sample_size',
    doc: "Effective sample size of the token importance weights clamped to [1/C, C], as a fraction of the tokens (verl's ESS; C is rollout_is_clip_max or tis_cap, else verl's 2).",
    formula: '1 / mean_t( (w~_t / mean w~)^2 ),  w~ = clamp(pi_old / mu, 1/C, C)',
    healthy: 'About 1: the weights are all alike. Below 0.9: a few tokens carry most of the weight.',
    moves:
      'Falling: the weights spread (stale or low-precision sampling); a corrected loss then leans on fewer tokens.',
    unit: 'fraction',
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    verl: 'rollout_corr/rollout_is_eff_sample_size',
  },
  {
    name: 'rollout_corr/rollout_is_ratio_fraction_high',
    doc: 'Share of the loss tokens whose importance weight pi_old / mu is above C: out of bounds above.',
    formula: '(1/M) sum_{i,t} m_{i,t} [pi_old / mu > C]',
    healthy: '0 on-policy; a few percent with a stale sampler.',
    moves:
      'Rising: the learner now favours tokens the sampler made rare; a truncating correction caps them at C, a masking one drops them.',
    unit: 'fraction',
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    verl: 'rollout_corr/rollout_is_ratio_fraction_high',
  },
  {
    name: 'rollout_corr/rollout_is_ratio_fraction_low',
    doc: 'Share of the loss tokens whose importance weight pi_old / mu is below 1/C: out of bounds below.',
    formula: '(1/M) sum_{i,t} m_{i,t} [pi_old / mu < 1/C]',
    healthy: '0 on-policy; a few percent with a stale sampler.',
    moves: 'Rising: the learner has moved away from tokens the sampler still drew often.',
    unit: 'fraction',
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    verl: 'rollout_corr/rollout_is_ratio_fraction_low',
  },
  {
    name: 'rollout_corr/ppl_ratio',
    doc: "Mean over sequences of the learner's perplexity over the sampler's: exp(mean log mu - mean log pi_old) per sequence.",
    formula: '(1/N) sum_i exp( (1/|y_i|) sum_t log mu(y_{i,t}) - (1/|y_i|) sum_t log pi_old(y_{i,t}) )',
    healthy: 'About 1.',
    moves:
      'Above 1: the learner finds the sampled text less likely than the sampler did (it moved away from it); below 1: more likely.',
    unit: 'ratio',
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    verl: 'rollout_corr/ppl_ratio',
  },
  {
    name: 'rollout_corr/chi2_token',
    doc: 'Token chi-squared divergence of pi_old from mu: the variance of the token importance weights.',
    formula: '(1/M) sum_{i,t} m_{i,t} rho_{i,t}^2 - 1,  rho = exp(clamp(log pi_old - log mu, -20, 20))',
    healthy: 'About 0 (1e-5 with a bf16 sampler).',
    moves: 'Rising: importance weights spread, so a corrected gradient gets noisier.',
    unit: 'ratio',
    range: [-1, Infinity],
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    verl: 'rollout_corr/chi2_token',
  },
  {
    name: 'rollout_corr/chi2_seq',
    doc: 'Sequence chi-squared divergence: the variance of the sequence importance weights prod_t rho_t.',
    formula: '(1/N) sum_i exp(2 clamp(sum_t m_{i,t} log rho_{i,t}, -20, 20)) - 1',
    healthy: 'About 0; it grows with the length of the completions as well as with the mismatch.',
    moves:
      'Far above chi2_token: the per-token gaps compound over long sequences; sequence-level corrections get very noisy.',
    unit: 'ratio',
    range: [-1, Infinity],
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    verl: 'rollout_corr/chi2_seq',
  },
  {
    name: 'masked_advantage_positive/mean',
    doc: "Among the tokens prime-rl's default loss would mask (DPPO: pi_old - mu above 0.2 where A > 0, below -0.2 where A < 0), the share with a positive advantage; per sequence (0 when none), averaged over sequences.",
    formula:
      '(1/N) sum_i |{t in D_i : A_{i,t} > 0}| / max(|D_i|, 1),  D_i = {t : m_{i,t}, A > 0 ? pi_old - mu > 0.2 : pi_old - mu < -0.2}',
    healthy:
      '0 on-policy (no token moves 0.2 in probability); with a stale sampler the masked tokens show which side of the advantage the drift favours.',
    moves:
      'Rising: the learner has already raised tokens the sampler drew rarely and the batch rewards them; their gradient would be dropped by a DPPO mask.',
    unit: 'fraction',
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    primeRl: 'masked_advantage_positive/mean',
    compare:
      "prime-rl measures the mask against the learner's forward at each micro-step, with its dppo_mask_low / dppo_mask_high (0.2 by default, fixed here)",
  },
  {
    name: 'masked_advantage_negative/mean',
    doc: "Among the tokens prime-rl's default loss would mask, the share with a negative advantage; per sequence (0 when none), averaged over sequences.",
    formula: '(1/N) sum_i |{t in D_i : A_{i,t} < 0}| / max(|D_i|, 1)',
    healthy: '0 on-policy.',
    moves:
      'Rising: the learner has already lowered tokens the batch penalises; a DPPO mask stops pushing them further.',
    unit: 'fraction',
    chart: 'sampling',
    per: 'rollout',
    when: 'when the learner scores the batch before its updates: the sampler differs (rollout_dtype half, max_staleness, weight_sync_steps) or the objective needs log pi_old',
    primeRl: 'masked_advantage_negative/mean',
  },
  // Stale rollouts (src/rl/algorithm/staleness.ts, docs/algorithms.md#stale-rollouts)
  {
    name: 'off_policy/steps_behind',
    doc: "Optimizer steps between the weights that sampled the batch and the learner's weights when it was sampled.",
    formula: 't - v x weight_sync_steps,  v = max(0, floor(t / weight_sync_steps) - max_staleness)',
    healthy:
      'max_staleness x weight_sync_steps once the run is past its first syncs (0 on-policy, smaller at the start).',
    moves: 'It is set by the knobs: the lab samples every batch at the largest staleness they allow.',
    unit: 'steps',
    chart: 'sampling',
    per: 'rollout',
    when: 'with max_staleness above 0 or weight_sync_steps above 1',
    primeRl: 'off_policy/mean',
    compare:
      "prime-rl's off_policy/mean counts trainer versions between dispatch and training, one per optimizer step; TRL drops samples more than max_staleness versions old",
  },
  {
    name: 'off_policy/versions_behind',
    doc: "Weight syncs (model versions) between the sampler's weights and the learner's: the staleness TRL's AsyncGRPOTrainer compares with max_staleness.",
    formula: 'floor(t / weight_sync_steps) - v',
    healthy: 'max_staleness once the run has made that many syncs.',
    moves: 'It is set by the knobs.',
    unit: 'versions',
    chart: 'sampling',
    per: 'rollout',
    when: 'with max_staleness above 0 or weight_sync_steps above 1',
  },
  // Rollout correction and the off-policy mask (docs/algorithms.md#rollout-correction)
  {
    name: 'sampling/importance_sampling_ratio/mean',
    doc: "Mean rollout correction weight c over the loss tokens: the importance weight pi_old / pi_sampler after rollout_is_mode's truncation or masking (tis_cap: its token truncation).",
    formula:
      '(1/M) sum_{i,t} m_{i,t} c_{i,t},  c = clamp(w, C_min, C_max) (truncate) or w [C_min <= w <= C_max] (mask), w = pi_old / pi_sampler per token or per sequence',
    healthy:
      'About 1: the sampler and the trainer agree. Under a mask mode, the share of masked tokens pulls it below 1.',
    moves:
      'Drifting from 1: the sampler and the trainer disagree more (half precision, another engine); the correction is doing work.',
    unit: 'ratio',
    chart: 'rollout_correction',
    per: 'update',
    when: 'with a rollout correction (rollout_is_mode not off, or tis_cap)',
    trl: 'sampling/importance_sampling_ratio/mean',
    verl: 'rollout_corr/rollout_is_mean',
    compare:
      'TRL and verl average the weight before masking, and over sequences in the sequence modes; here it is the applied weight, over tokens',
  },
  {
    name: 'rollout_correction/truncated_frac',
    doc: 'Fraction of loss tokens whose importance weight w lay outside [rollout_is_clip_min, rollout_is_clip_max] and was truncated to it (the *_truncate modes, and tis_cap).',
    formula: '(1/M) #{(i,t) : m_{i,t} = 1, w_{i,t} < C_min or w_{i,t} > C_max}',
    healthy: 'Near 0 when sampler and trainer agree; a few percent under half-precision sampling.',
    moves: 'Rising: the gap between sampler and trainer widens, so more tokens hit the bounds.',
    unit: 'fraction',
    chart: 'rollout_correction',
    per: 'update',
    when: 'with a rollout correction (rollout_is_mode not off, or tis_cap); 0 under a mask mode',
    verl: 'rollout_corr/rollout_is_ratio_fraction_high',
    compare:
      'verl counts the weights above the threshold (fraction_high) and below its reciprocal (fraction_low) apart',
  },
  {
    name: 'rollout_correction/masked_frac',
    doc: 'Fraction of loss tokens whose correction weight was set to 0 because w (or its sequence, or its geometric mean) lay outside the bounds (the *_mask modes).',
    formula:
      '(1/M) #{(i,t) : m_{i,t} = 1, w outside [C_min, C_max]},  w per token (token_mask), per sequence (sequence_mask), exp(mean_t log w) (sequence_geo_mask)',
    healthy: 'Near 0 when sampler and trainer agree; above 0.1 the correction throws away much of the batch.',
    moves: 'Rising: many samples are too far off-policy for the bounds; the policy learns from fewer tokens.',
    unit: 'fraction',
    chart: 'rollout_correction',
    per: 'update',
    when: 'with a rollout correction (rollout_is_mode not off, or tis_cap); 0 under a truncate mode',
    verl: 'rollout_corr/rollout_rs_masked_fraction',
  },
  {
    name: 'off_policy_mask/masked_frac',
    doc: 'Fraction of loss tokens dropped by the off-policy sequence mask: tokens with A < 0 of sequences whose mean log(pi_sampler / pi_theta) exceeds off_policy_mask_threshold.',
    formula: '(1/M) #{(i,t) : m_{i,t} = 1, A_{i,t} < 0, (1/n_i) sum_t m (log pi_sampler - log pi_theta) > delta}',
    healthy:
      'Near 0 on the first update of a batch; it grows with later epochs (num_iterations > 1) as pi_theta moves away.',
    moves: 'Rising: the policy drifts far from the sampler within a batch; fewer negative samples teach.',
    unit: 'fraction',
    chart: 'rollout_correction',
    per: 'update',
    when: 'with off_policy_mask_threshold set',
  },

  // Reward functions
  {
    name: 'rewards/<fn>/mean',
    doc: "Mean of one reward function's value over the rollout step's completions, before weighting: accuracy, format, overlong, ...",
    formula: '(1/N) sum_i R_fn(x, y_i)',
    healthy:
      'accuracy rises; format is near 1 from the warm start on; overlong stays near 0 (no completion reaches the buffer).',
    moves: 'Compare the parts: one rising while accuracy stays flat is what the policy optimizes instead of the task.',
    unit: 'reward',
    range: [0, 1],
    chart: 'rewards',
    per: 'rollout',
    when: "one per reward function <fn> of the run's reward weights (the task's accuracy and format, and user with a reward_fn), and rewards/overlong/* with overlong_buffer_enable",
    trl: 'rewards/<fn>/mean',
  },
  {
    name: 'rewards/<fn>/std',
    doc: "Standard deviation of one reward function's value over the rollout step's completions.",
    formula: 'std_i R_fn(x, y_i),  unbiased (divides by N - 1)',
    healthy: 'Above 0 for accuracy (some right, some wrong); 0 for a part every completion already satisfies.',
    moves: 'Falling to 0: that reward function no longer separates the completions, so it no longer teaches.',
    unit: 'reward',
    range: [0, Infinity],
    chart: 'rewards',
    per: 'rollout',
    when: "one per reward function <fn> of the run's reward weights (the task's accuracy and format, and user with a reward_fn), and rewards/overlong/* with overlong_buffer_enable",
    trl: 'rewards/<fn>/std',
  },

  // Token selection
  {
    name: 'token_selection/entropy_kept_frac',
    doc: "Fraction of loss tokens kept in the policy loss by top_entropy_quantile (the batch's highest-entropy q); 1 when off.",
    formula:
      '(1/M) #{kept},  kept: the k = M - ceil((1 - q)(M - 1)) highest H_{i,t} of the batch (ties at the threshold all kept)',
    healthy: 'About q when on (q = 0.2: 0.2); exactly 1 when off.',
    moves: 'Well above q: many tokens tie at the threshold entropy, a sign of a near-deterministic policy.',
    unit: 'fraction',
    chart: 'selection',
    per: 'update',
  },
  {
    name: 'token_selection/cov_selected_frac',
    doc: 'Fraction of loss tokens picked by Clip-Cov (detached from the policy loss) or KL-Cov (given a KL penalty); 0 when both are off.',
    formula:
      '(1/M) #{picked},  picked: the k = max(floor(ratio M), 1) largest cov_{i,t} = (A_{i,t} - mean A)(log pi_theta - mean log pi_theta) (Clip-Cov: among unclipped tokens with clip_cov_lb < cov < clip_cov_ub)',
    healthy: 'About clip_cov_ratio or kl_cov_ratio when on (2e-4 to 0.01); fewer when few tokens are candidates.',
    moves: 'Below the ratio under Clip-Cov: few tokens fall in the covariance band, so the method is barely acting.',
    unit: 'fraction',
    chart: 'selection',
    per: 'update',
  },

  // Critic
  {
    name: 'vf_explained_var',
    doc: "How much of the returns' variance the critic's V_old explains over the rollout step's loss tokens; 0 when the returns do not vary.",
    formula: '1 - Var(R - V_old) / Var(R) over the tokens with m_{i,t} = 1',
    healthy: 'Rises from about 0 toward 0.3-0.8 as the critic learns; negative means worse than predicting the mean.',
    moves: "Stuck near 0 or negative: the critic is not learning, and GAE's advantages are mostly noise.",
    unit: '',
    chart: 'critic',
    per: 'rollout',
    when: 'with adv_estimator gae (the ppo preset)',
    verl: 'critic/vf_explained_var',
  },
  {
    name: 'vpred_mean',
    doc: "Mean of the critic's prediction V over the loss tokens at this optimizer step.",
    formula: '(1/M) sum_{i,t} m_{i,t} V_{i,t}',
    healthy: "Starts at 0 (the critic's head starts at zero) and approaches return_mean within tens of steps.",
    moves: 'Lagging far behind return_mean: the critic learns too slowly (critic_learning_rate, vf_coef).',
    unit: 'reward',
    chart: 'critic',
    per: 'update',
    when: 'with adv_estimator gae (the ppo preset)',
    verl: 'critic/vpred_mean',
  },
  {
    name: 'return_mean',
    doc: "Mean GAE return over the loss tokens at this optimizer step: the critic's target.",
    formula: '(1/M) sum_{i,t} m_{i,t} R_{i,t},  R_t = A^GAE_t + V_old,t (before whitening)',
    healthy:
      'Near reward minus the KL penalty in the reward (gamma 1: the final reward minus the KL summed from t on).',
    moves: 'Follows reward; a gap below reward is the KL penalty.',
    unit: 'reward',
    chart: 'critic',
    per: 'update',
    when: 'with adv_estimator gae (the ppo preset)',
    verl: 'critic/returns/mean',
  },
  {
    name: 'value_clipfrac',
    doc: 'Fraction of loss tokens where the clipped value branch is strictly larger: V moved more than cliprange_value from V_old.',
    formula: '(1/M) sum_{i,t} m_{i,t} [(clip(V, V_old - eps_v, V_old + eps_v) - R)^2 > (V - R)^2]',
    healthy:
      'Exactly 0 on the first optimizer step of a batch (V = V_old) and without value clipping; low (below 0.2) otherwise.',
    moves: 'Rising: the critic moves far within a batch and the clip holds it back.',
    unit: 'fraction',
    chart: 'critic',
    per: 'update',
    when: 'with adv_estimator gae (the ppo preset)',
    trl: 'val/clipfrac_avg',
    verl: 'critic/vf_clipfrac',
    compare: 'TRL: its PPOTrainer',
  },

  // Curriculum
  {
    name: 'difficulty',
    doc: 'The task difficulty the rollout step sampled its prompts at (it moves under a curriculum).',
    formula:
      'fixed: difficulty; easy_to_hard: d_min + round((difficulty - d_min) s / (steps - 1)) at step s (from 0); adaptive: sampled among d_min..difficulty with weight max(0.05, 1 - success EMA)',
    healthy:
      'Constant under curriculum fixed; a staircase under easy_to_hard; under adaptive it wanders toward the difficulties the policy still fails.',
    moves: 'Under adaptive, drifting up: the easier levels are mastered (their success EMA is high).',
    unit: '',
    chart: 'curriculum',
    per: 'rollout',
  },

  // Weight updates
  {
    name: 'weights/<matrix>/rel_update',
    doc: "How far one weight has moved from the run's starting weights, relative to its size. <matrix> is embed, layers.<i>.attn_norm, .q, .k, .v, .o, .mlp_norm, .gate, .up, .down, norm, and head when the embeddings are untied.",
    formula: '||W_t - W_0||_F / ||W_0||_F,  W_0 the weights at the start of the run (kept beside the policy)',
    healthy:
      "Grows over the run, fast at first (AdamW's first steps move every weight by about the learning rate). The first lesson's run (GRPO on copy, nano, learning rate 1e-3) measured 0.05-0.09 per matrix at step 10 and 0.10-0.28 at step 50, the last layer ahead of the first; the norm gains an order of magnitude less (2e-3 to 2e-2).",
    moves:
      'One matrix far ahead of the others: the update concentrates there (look at its rank-1 share). A jump: one large step (see grad_norm). Flat: the learning rate is too small to move it, or it gets no gradient.',
    unit: '',
    chart: 'weights',
    per: 'rollout',
    when: 'every weight_stats_every rollout steps, one per weight <matrix> of the model',
  },
  {
    name: 'weights/<matrix>/rank1_share',
    doc: "The fraction of one weight matrix's update W_t - W_0 that lies in its top singular direction: 1 when the whole update is one outer product u v^T.",
    formula:
      'sigma_1^2 / ||W_t - W_0||_F^2 = sigma_1^2 / sum_k sigma_k^2,  sigma_1 by 64 power iterations on dW^T dW from a fixed start vector; 0 when W_t = W_0',
    healthy:
      "Well above a noise update's, about 4 / min(rows, cols) for a random matrix (0.08 for nano's 48 columns). The first lesson's run (GRPO on copy, nano) measured 0.93-0.95 for the embedding and 0.35-0.76 for the other matrices over steps 10-50. The rank-1 evaluation (rank1_eval) says whether that one direction carries what was learned.",
    moves:
      'Falling over the run: the update spreads over more directions. Near 1: one direction carries the whole update. About 4 / min(rows, cols): the update looks like noise.',
    unit: 'fraction',
    chart: 'rank1',
    per: 'rollout',
    when: "every weight_stats_every rollout steps, one per weight matrix <matrix> (a norm's gain is a vector and has none)",
  },

  // Tokens
  {
    name: 'completions/loss_tokens',
    doc: 'Completion tokens in the loss in this rollout step: the sum of the loss mask over the batch.',
    formula: 'sum_{i,t} m_{i,t} over the N completions of the rollout step',
    healthy:
      'N times the mean length (2 prompts x 4 completions of 4 tokens: 32); smaller only when mask_truncated_completions drops truncated completions.',
    moves: 'Below N x mean_length: truncated completions were masked out. 0: nothing trains this step.',
    unit: 'tokens',
    chart: 'tokens',
    per: 'rollout',
  },
  {
    name: 'num_tokens',
    doc: "Prompt and completion tokens of every rollout batch so far in the run (cumulative; TRL's num_tokens).",
    formula: 'sum over the rollout steps so far of sum_i (prompt length of y_i + len(y_i))',
    healthy: 'Grows linearly: each step adds about N x (prompt length + completion length).',
    moves:
      'Its slope is the tokens per step; a kink means the lengths changed. A fair x axis to compare runs with different batch sizes.',
    unit: 'tokens',
    chart: 'tokens',
    per: 'rollout',
    trl: 'num_tokens',
    compare: "verl's perf/total_num_tokens is the tokens of one step, not a running total",
  },

  // Throughput
  {
    name: 'perf/rollout_tokens_per_s',
    doc: 'Completion tokens of the batch trained on, per second of the sampling phase (timing_s/gen).',
    formula: 'sum_i len(y_i) / timing_s/gen',
    healthy: 'Steady within a run; hundreds to thousands per second for the nano model depending on the device.',
    moves:
      'Falling: the device throttles or is shared, or dynamic sampling draws extra batches (their time counts, their tokens do not).',
    unit: 'tokens/s',
    chart: 'throughput',
    per: 'rollout',
  },
  {
    name: 'perf/train_tokens_per_s',
    doc: 'Loss tokens trained on per second of the update phase (timing_s/update_actor), over every pass of num_iterations.',
    formula: 'completions/loss_tokens x num_iterations / timing_s/update_actor',
    healthy: 'Steady within a run; lower than the rollout rate, since each token needs a forward and a backward pass.',
    moves: 'Falling: longer sequences (attention costs grow with length) or a slower device.',
    unit: 'tokens/s',
    chart: 'throughput',
    per: 'rollout',
  },

  // Time
  {
    name: 'step_time',
    doc: 'Wall time of the whole rollout step: sampling, scoring, advantages, every optimizer step, and the evaluation when one ran.',
    formula: 't_end - t_start of the rollout step, in seconds',
    healthy:
      'Steady within a run; it grows with N, L_max and num_iterations x num_minibatches (a 8 x 8 GRPO step on copy: about 4 s on a CPU-only machine).',
    moves:
      'A steady rise: completions lengthen or the device throttles. Spikes: evaluation steps (timing_s/testing) or other work on the machine.',
    unit: 's',
    chart: 'time',
    per: 'rollout',
    formerly: [{ name: 'timing_s/step' }, { name: 'perf/step_ms', scale: 0.001 }],
    trl: 'step_time',
    verl: 'timing_s/step',
    openrlhf: 'timing/step_total',
    compare:
      'TRL times each optimizer step, generation included on the steps that sample a new batch, not the whole rollout step',
  },
  {
    name: 'timing_s/<phase>',
    doc: 'Seconds the rollout step spent in one phase: timing_s/gen sampling and scoring the rewards, timing_s/old_log_prob the scoring pass (log pi_old, log pi_ref, V_old), timing_s/adv the advantages, timing_s/update_actor the optimizer steps and their readback, timing_s/testing the held-out evaluation (and its rank-1 repeat under rank1_eval), timing_s/weights the weight statistics.',
    formula: 'wall time of the phase within the rollout step, in seconds',
    healthy:
      'timing_s/update_actor and timing_s/old_log_prob dominate (a GRPO step on copy: about 54% and 38%); timing_s/adv is close to 0.',
    moves:
      'A phase growing out of proportion names the bottleneck: timing_s/gen grows with longer completions, timing_s/old_log_prob with a reference model or a critic, timing_s/testing with eval_items.',
    unit: 's',
    chart: 'time',
    per: 'rollout',
    when: 'timing_s/gen, timing_s/adv and timing_s/update_actor every step; timing_s/old_log_prob when the batch is scored (num_iterations > 1, several minibatches, beta > 0 or a critic); timing_s/testing on the steps that evaluate (eval_every); timing_s/weights on the steps that measure the weights (weight_stats_every)',
    verl: 'timing_s/<phase>',
    compare: 'verl uses the same phase names, and more: ref, values, update_critic',
  },
] as const satisfies readonly MetricSpec[];

// ---------------------------------------------------------------------------------------------------------
// Names as types, and lookups.

type CatalogName = (typeof METRICS)[number]['name'];
/** `rewards/<fn>/mean` -> `rewards/${string}/mean`: each `<placeholder>` becomes one `${string}`. */
type Placeholders<S extends string> = S extends `${infer Head}<${string}>${infer Tail}`
  ? `${Head}${string}${Placeholders<Tail>}`
  : S;
type Templated = Extract<CatalogName, `${string}<${string}>${string}`>;

/** Every metric name: the catalog's names, with `<fn>`/`<phase>` placeholders standing for any string. */
export type MetricName = Placeholders<CatalogName>;

/**
 * A metric record typed by the catalog: the fixed names optional, the templated ones as index signatures (a read
 * of `timing_s/x` types as number but may be absent). Indexing it with a name the catalog lacks fails typecheck, so
 * code that reads a metric by name reads it through this type and breaks at compile time when the metric is renamed.
 * A `Record<string, number>` is assignable to it (the trainer builds names dynamically), and it to that.
 */
export type Metrics = { [K in Exclude<CatalogName, Templated>]?: number } & { [K in Placeholders<Templated>]: number };

const BY_NAME = new Map<string, MetricSpec>(METRICS.map((m) => [m.name, m]));

/** A template as a whole-name pattern: each placeholder matches one non-empty path segment. */
function templatePattern(name: string): RegExp {
  const parts = name.split(/<[^>]+>/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}$`);
}

const TEMPLATES: { spec: MetricSpec; pattern: RegExp }[] = METRICS.filter((m) => m.name.includes('<')).map((m) => ({
  spec: m,
  pattern: templatePattern(m.name),
}));

const FORMERLY = new Map<string, { name: string; scale: number }>(
  METRICS.flatMap((m) =>
    ('formerly' in m ? m.formerly : []).map(
      (f) => [f.name, { name: m.name, scale: 'scale' in f ? f.scale : 1 }] as const,
    ),
  ),
);

/**
 * The catalog entry of a current metric name: an exact name, or an instance of a template (`rewards/format/mean`
 * -> `rewards/<fn>/mean`). A former name is not current (`timing_s/step` is step_time's, not a phase): map it with
 * currentMetricName first. Undefined for names the catalog lacks.
 */
export function metricSpec(name: string): MetricSpec | undefined {
  const exact = BY_NAME.get(name);
  if (exact) return exact;
  if (FORMERLY.has(name)) return undefined;
  return TEMPLATES.find((t) => t.pattern.test(name))?.spec;
}

/**
 * The current name of a metric and the factor its old values are multiplied by: a former name (MetricSpec.formerly)
 * maps to the metric that replaced it (`perf/step_ms` -> `step_time`, scale 0.001); any other name maps to itself
 * with scale 1.
 */
export function currentMetricName(name: string): { name: string; scale: number } {
  return FORMERLY.get(name) ?? { name, scale: 1 };
}

/** The values a metric of each unit can take, when its entry names no `range`. */
const UNIT_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  fraction: [0, 1],
  tokens: [0, Infinity],
  'tokens/s': [0, Infinity],
  s: [0, Infinity],
  nats: [0, Infinity],
};

/**
 * The values a metric can take, for its chart's axis: its entry's `range`, else its unit's (a fraction [0, 1],
 * tokens, seconds and nats from 0); undefined when neither says (a loss, a name the catalog lacks).
 */
export function metricRange(name: string): readonly [number, number] | undefined {
  const spec = metricSpec(name);
  if (!spec) return undefined;
  return spec.range ?? UNIT_RANGES[spec.unit];
}

/** The chart a metric is drawn on; undefined for names the catalog lacks. */
export function chartOf(name: string): ChartId | undefined {
  return metricSpec(name)?.chart;
}

/** Position of a name in catalog order: its entry's index (instances of one template share it). */
function catalogIndex(name: string): number {
  const spec = metricSpec(name);
  return spec ? METRICS.indexOf(spec as (typeof METRICS)[number]) : METRICS.length;
}

/**
 * Names in catalog order (the CSV header's and the docs' order): by catalog entry, instances of one template
 * sorted by name, then the names the catalog lacks, sorted.
 */
export function orderMetricNames(names: Iterable<string>): string[] {
  const keyed = [...new Set(names)].map((n) => [catalogIndex(n), n] as const);
  keyed.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return keyed.map(([, n]) => n);
}
