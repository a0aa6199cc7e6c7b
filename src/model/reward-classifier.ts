// A learned reward model: a Hugging Face text-classification model in ONNX, run by transformers.js's pipeline
// (onnxruntime-node in Node; WASM or WebGPU in the browser), scoring a batch of texts in one call. The reward of a
// text is one chosen label's probability or logit. transformers.js is imported on first load only, never at page
// startup, and nothing is fetched from a hub: the caller passes the folder's files in (a picker, a path, or a URL
// the caller fetched), served to transformers.js from memory.

/** The files of a text-classification model folder, by their path in it. */
export type ClassifierFiles = ReadonlyMap<string, Uint8Array>;

/** Which number of the classifier's output becomes the reward. */
export type ClassifierOutput = 'probability' | 'logit';

export interface RewardClassifierOptions {
  /** The label whose score is the reward (a key of config.json's label2id), e.g. "POSITIVE". */
  label: string;
  /** 'probability' (softmax over labels, in [0, 1]) or 'logit' (the raw score). */
  output?: ClassifierOutput;
  /** Where ONNX Runtime runs it: 'cpu' (Node), 'wasm' or 'webgpu' (browser). Default: the runtime's own. */
  device?: 'cpu' | 'wasm' | 'webgpu';
}

export interface RewardClassifier {
  /** The model's labels in id order (config.json id2label). */
  readonly labels: readonly string[];
  readonly label: string;
  readonly output: ClassifierOutput;
  /** One reward per text, in order; one batched model call. */
  score(texts: readonly string[]): Promise<Float64Array>;
  dispose(): Promise<void>;
}

export class RewardClassifierError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RewardClassifierError';
  }
}

/** The files transformers.js needs; the ONNX file is onnx/model.onnx (fp32), as Hugging Face's ONNX exports lay it out. */
export const CLASSIFIER_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'] as const;

interface ClassifierConfig {
  labels: string[];
}

/** Reads config.json's id2label into labels by id, naming what is wrong when it cannot. */
export function classifierLabels(configText: string): ClassifierConfig {
  let config: unknown;
  try {
    config = JSON.parse(configText);
  } catch (e) {
    throw new RewardClassifierError(`config.json is not JSON: ${(e as Error).message}`);
  }
  const id2label = (config as { id2label?: unknown } | null)?.id2label;
  if (id2label === null || typeof id2label !== 'object' || Array.isArray(id2label)) {
    throw new RewardClassifierError(
      'config.json has no id2label object: a text-classification model names its labels there',
    );
  }
  const entries = Object.entries(id2label as Record<string, unknown>);
  const labels: string[] = [];
  for (const [id, name] of entries) {
    const i = Number(id);
    if (!Number.isInteger(i) || i < 0 || i >= entries.length || typeof name !== 'string') {
      throw new RewardClassifierError(
        `config.json id2label entry ${JSON.stringify(id)}: ${JSON.stringify(name)} is not "<id 0..${entries.length - 1}>": "<label>"`,
      );
    }
    labels[i] = name;
  }
  if (labels.length < 2)
    throw new RewardClassifierError(`config.json id2label has ${labels.length} label; a classifier needs at least 2`);
  return { labels };
}

/** Checks that the folder has every file transformers.js will ask for, before it is imported. */
export function checkClassifierFiles(files: ClassifierFiles): void {
  const missing = CLASSIFIER_FILES.filter((f) => !files.has(f));
  if (missing.length > 0) {
    throw new RewardClassifierError(
      `the reward model folder lacks ${missing.join(', ')} (a text-classification model needs ${CLASSIFIER_FILES.join(', ')})`,
    );
  }
}

const MEMORY_ROOT = '/rl-lab-memory/';
let nextModelId = 0;
/** The in-memory folders transformers.js may read, by model id. */
const served = new Map<string, ClassifierFiles>();

/** Softmax of one row, in float64. */
export function softmaxRow(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  const out = new Float64Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += out[i] = Math.exp(logits[i] - max);
  for (let i = 0; i < out.length; i++) out[i] /= sum;
  return out;
}

/**
 * Loads a text-classification model from its files through transformers.js. The files are served to it from memory
 * under a private path: `env.fetch` answers for that path and passes anything else to the fetch it had, remote
 * models and the library's caches are off.
 */
export async function loadRewardClassifier(
  files: ClassifierFiles,
  options: RewardClassifierOptions,
): Promise<RewardClassifier> {
  checkClassifierFiles(files);
  const { labels } = classifierLabels(new TextDecoder().decode(files.get('config.json')));
  const labelIndex = labels.indexOf(options.label);
  if (labelIndex < 0) {
    throw new RewardClassifierError(
      `label ${JSON.stringify(options.label)} is not one of the model's labels (${labels.join(', ')})`,
    );
  }
  const output = options.output ?? 'probability';

  const tf = await import('@huggingface/transformers');
  serveFromMemory(tf.env);
  useBundledRuntime(tf.env);
  const modelId = `rl-lab/classifier-${nextModelId++}`;
  served.set(modelId, files);
  let model: Awaited<ReturnType<typeof tf.AutoModelForSequenceClassification.from_pretrained>>;
  let tokenizer: Awaited<ReturnType<typeof tf.AutoTokenizer.from_pretrained>>;
  try {
    tokenizer = await tf.AutoTokenizer.from_pretrained(modelId);
    model = await tf.AutoModelForSequenceClassification.from_pretrained(modelId, {
      dtype: 'fp32',
      ...(options.device ? { device: options.device } : {}),
    });
  } catch (e) {
    served.delete(modelId);
    throw new RewardClassifierError(`transformers.js could not load the reward model: ${(e as Error).message}`);
  }

  return {
    labels,
    label: options.label,
    output,
    async score(texts: readonly string[]): Promise<Float64Array> {
      const rewards = new Float64Array(texts.length);
      if (texts.length === 0) return rewards;
      // Empty texts would tokenize to zero tokens; the model needs one position, so they score as one space.
      const inputs = tokenizer(
        texts.map((t) => (t.length === 0 ? ' ' : t)),
        { padding: true, truncation: true },
      );
      const { logits } = await model(inputs);
      const width = labels.length;
      const data = logits.data as Float32Array;
      if (logits.dims.length !== 2 || logits.dims[0] !== texts.length || logits.dims[1] !== width) {
        throw new RewardClassifierError(
          `the model returned logits of shape [${logits.dims.join(', ')}], expected [${texts.length}, ${width}]`,
        );
      }
      for (let r = 0; r < texts.length; r++) {
        const row = data.subarray(r * width, (r + 1) * width);
        rewards[r] = output === 'logit' ? row[labelIndex] : softmaxRow(row)[labelIndex];
      }
      return rewards;
    },
    async dispose(): Promise<void> {
      served.delete(modelId);
      await model.dispose();
    },
  };
}

type TransformersEnv = typeof import('@huggingface/transformers')['env'];

/**
 * In the browser transformers.js points ONNX Runtime at a CDN for its WASM files. The lab never loads code from
 * another site (and its machines have no network): clearing the paths makes ONNX Runtime load the copy the build
 * ships beside its own module. Node's runtime (onnxruntime-node) has no such paths.
 */
function useBundledRuntime(env: TransformersEnv): void {
  const wasm = (env.backends.onnx as { wasm?: { wasmPaths?: unknown } } | undefined)?.wasm;
  if (!wasm) return;
  const paths = wasm.wasmPaths;
  const remote = (p: unknown) =>
    typeof p === 'string' && /^https?:/.test(p) && typeof location !== 'undefined' && !p.startsWith(location.origin);
  if (remote(paths) || (paths !== null && typeof paths === 'object' && Object.values(paths).some(remote)))
    wasm.wasmPaths = undefined;
}

/**
 * The file of a served folder that a transformers.js cache key names, or undefined. Keys are the local path
 * (`/rl-lab-memory/<id>/<file>`) or the hub address (`.../<id>/resolve/main/<file>`); both contain `<id>/`.
 */
function servedFile(key: string): Uint8Array | undefined {
  for (const [id, folder] of served) {
    const at = key.indexOf(`${id}/`);
    if (at < 0) continue;
    const file = key.slice(at + id.length + 1).replace(/^resolve\/[^/]+\//, '');
    return folder.get(file);
  }
  return undefined;
}

/**
 * Points transformers.js at the served folders through its custom-cache hook, the one path that hands it bytes in
 * Node and in the browser alike (in Node it otherwise wants a file path for ONNX models). Remote models, the file
 * system and the browser's cache are off, so a missing file fails instead of being looked up anywhere else.
 */
function serveFromMemory(env: TransformersEnv): void {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.useFS = false;
  env.useFSCache = false;
  env.useBrowserCache = false;
  env.localModelPath = MEMORY_ROOT;
  env.useCustomCache = true;
  env.customCache = {
    async match(key: string): Promise<Response | undefined> {
      const bytes = servedFile(typeof key === 'string' ? key : String(key));
      return bytes === undefined
        ? undefined
        : new Response(bytes.slice(), { status: 200, headers: { 'content-length': String(bytes.byteLength) } });
    },
    async put(): Promise<void> {},
  } as unknown as typeof env.customCache;
}
