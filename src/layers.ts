// The layers of src/ and what the page may import from below it: the one copy of the dependency rule.
// docs/architecture.md quotes LAYER_LINE; src/layers.test.ts enforces ORDER and PAGE_SAFE on every import and
// checks that the document quotes the line as rendered here.

/**
 * Layers from the top; a layer may import values from itself and the layers after it, and name types from any
 * layer (a type carries no code). `main` is src/main.tsx and the other files at the top of src/. Under the run's
 * code sit its files (`io`: safetensors, checkpoints, HF and PEFT folders, tokenizers, run files, zip, foreign
 * logs), the hub client, and the page-safe layers: `schema` (every knob, preset, model config, run type and
 * catalog), `tasks` (the task registry and verifiers) and `core` (seeded RNG, parameter shapes, quoting).
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
  'model',
  'kernels',
  'reference',
  'gpu',
  'io',
  'hub',
  'schema',
  'tasks',
  'core',
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
 * The layers below the page that the page (main.tsx, ui/, store/) may import values from, whole folders: the
 * worker's client and messages, the lessons' texts and checks, the export scripts, the file formats, and the
 * page-safe layers. What a run does arrives as worker messages; types may come from anywhere. What these reach is
 * checked against PAGE_NEVER, however many hops away.
 */
export const PAGE_SAFE: readonly Layer[] = ['worker', 'lessons', 'export', 'io', 'schema', 'tasks', 'core'];

/**
 * Paths under src/ that nothing the page loads may reach, however many hops away: the GPU layer, the kernels and
 * their WGSL, the model, the trainer and its learners, the bench, the engine itself.
 */
export const PAGE_NEVER: readonly RegExp[] = [
  /^gpu\//,
  /^kernels\//,
  /^model\//,
  /^rl\//,
  /^bench\//,
  /^engine\//,
  /\.wgsl$/,
  /^\.\.\/shaders\//,
];
