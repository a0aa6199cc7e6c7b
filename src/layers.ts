// The layers of src/ and what the page may import from below it: the one copy of the dependency rule.
// docs/architecture.md quotes LAYER_LINE; src/layers.test.ts enforces ORDER and PAGE_IMPORTS on every import and
// checks that the page quotes the line as rendered here.

/**
 * Layers from the top; a layer may import from itself and the layers after it. `main` is src/main.tsx and the
 * other files at the top of src/; `core` (seeded RNG, parameter shapes, LoRA target parsing) sits under
 * everything but the schema.
 */
export const ORDER = [
  'main',
  'cli',
  'ui',
  'store',
  'lessons',
  'worker',
  'bench',
  'engine',
  'export',
  'rl',
  'tasks',
  'model',
  'kernels',
  'reference',
  'gpu',
  'hub',
  'core',
  'schema',
] as const;
export type Layer = (typeof ORDER)[number];

/** How the rule line names a layer where the folder's name alone would mislead. */
const LABELS: Partial<Record<Layer, string>> = { main: 'main.tsx', worker: 'worker client ~> worker' };

/** The rule in one line: the two entry points side by side, then each layer above the ones it may import. */
export const LAYER_LINE = `${LABELS.main}, ${ORDER.slice(1)
  .map((l) => LABELS[l] ?? l)
  .join(' -> ')}`;

/** The page: what main.tsx loads into the browser tab, above the worker. */
export const PAGE_LAYERS: readonly Layer[] = ['main', 'ui', 'store'];

/**
 * The modules below the page that the page (main.tsx, ui/, store/) may import values from, as paths under src/
 * without the extension (a folder means its index.ts). Each is pure data or pure functions of data, and so is
 * everything it imports; types may come from anywhere. What a run does arrives as worker messages.
 */
export const PAGE_IMPORTS: readonly string[] = [
  // the worker's clients and their message types
  'worker/client',
  'worker/requests',
  'worker/protocol',
  'worker/bench-client',
  'worker/startup-marks',
  // the knob schema, the metric catalog and the other names runs are described in
  'rl/config',
  'rl/stream',
  'rl/compare-explain',
  // the seconds-per-step estimate's words (its arithmetic is pure; the worker computes the figures)
  'rl/step-estimate',
  'schema/metrics',
  'schema/histograms',
  'schema/objective',
  'schema/fields',
  'schema/weight-names',
  'schema/adapter-text',
  'model/config',
  'tasks',
  // lesson texts, checks and the gathering of a run's records for them
  'lessons',
  'lessons/results',
  'lessons/opening',
  // small pure helpers of the engine layer
  'engine/types',
  'engine/seed-group',
  'engine/cpu-limit',
  'engine/checkpoint-path',
  'engine/folder-names',
  'engine/step-pace',
  'bench/report',
  'export',
  // hub ids and endpoints checked as strings and URLs (src/hub/hub-id.ts)
  'hub/hub-id',
  // the hub origins this build may connect to (the same list as its CSP)
  'hub/origins',
  // pure helpers of the bottom layer
  'core/random',
  'core/format',
  'core/zip',
];

/**
 * Paths under src/ that nothing the page loads may reach, however many hops away: the GPU layer, the kernels and
 * their WGSL, the GPU model, the trainer and its learners, the engine itself.
 */
export const PAGE_NEVER: readonly RegExp[] = [
  /^gpu\//,
  /^kernels\//,
  /^model\/gpu-/,
  /^model\/policy\b/,
  /^rl\/trainer/,
  /^rl\/learner/,
  /^rl\/cpu-learner/,
  /^engine\/lab-engine/,
  /\.wgsl$/,
  /^\.\.\/shaders\//,
];
