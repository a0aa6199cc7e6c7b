// A trained policy written back as the folders transformers and PEFT load: `<run>-step<N>/` with the weights,
// config.json, generation_config.json, tokenizer.json, tokenizer_config.json (the chat template inside it, as the
// source model had it) and special_tokens_map.json, for AutoModelForCausalLM.from_pretrained; and for a LoRA run
// `<run>-step<N>-adapter/` with adapter_config.json, adapter_model.safetensors and README.md, for
// PeftModel.from_pretrained. The file names are transformers' and PEFT's recorded facts (model/fixtures). Pure:
// bytes and strings in, paths and contents out; the page zips them or writes them into a folder, the CLI writes them.
// Every value a person chose (the run's name, the base model's name) reaches a file only JSON-encoded or sanitised.

import peft from './fixtures/peft.json';
import { readSafetensors, readSafetensorsHeader, writeSafetensors, type SafetensorsTensor } from './safetensors';
import hf from './fixtures/transformers.json';
import { pyString } from '../core/quote';

/** One file of the export: its path under the folder the person picks ("run-step3/config.json") and its content. */
export interface HfExportFile {
  path: string;
  data: Uint8Array | string;
}

/** The subfolder of a run's policy files that holds its LoRA adapters in PEFT's layout (the CLI's run folder too). */
export const POLICY_ADAPTER_DIR = 'adapter';

/** A policy's files as the run keeps them (engine/run-session.ts policyFiles: adapters under POLICY_ADAPTER_DIR). */
export interface PolicyFileSet {
  step: number;
  files: readonly { name: string; data: Uint8Array | string }[];
}

export interface HfExportInput {
  /** The run's name as the person wrote it (sanitised into the folder name here). */
  runName: string;
  policy: PolicyFileSet;
  /** The source model's generation_config.json, or null when it had none (the ids of config.json are written). */
  sourceGenerationConfigJson: string | null;
  /**
   * The source model's config.json, or null when it cannot be read: config.json keeps its eos_token_id, as
   * save_pretrained keeps each file's own (the run's checkpoint lists every id its tokenizer stops on, the
   * generation_config.json list included). Without it the run's config.json is written as it is.
   */
  sourceConfigJson?: string | null;
  /** The hub id or path the run started from, for adapter_config.json's base_model_name_or_path; null for none. */
  baseModel: string | null;
  /**
   * Weights past this many bytes are split into model-0000k-of-0000N.safetensors shards with
   * model.safetensors.index.json, as save_pretrained splits them (default: transformers' 5 GB).
   */
  maxShardBytes?: number;
}

export interface HfExport {
  /** The model folder's name, `<run>-step<N>`. */
  folder: string;
  /** The adapter folder's name (`<run>-step<N>-adapter`), or null when the run trained no LoRA adapters. */
  adapterFolder: string | null;
  files: HfExportFile[];
}

/** Why the weights are float32: said in the UI, the README and the adapter's model card. */
export const EXPORT_DTYPE_NOTE =
  'The weights are float32, the precision the lab trains in: a bfloat16 copy would round away the small updates training made. config.json says torch_dtype float32; pass torch_dtype=torch.bfloat16 to from_pretrained for a half-size copy in memory.';

/** Longest folder name the export writes (the step suffix included), well inside every file system's limit. */
const MAX_FOLDER = 96;

/**
 * A folder name from a run's name and step: accents dropped, ASCII letters, digits, `.`, `_` and `-` kept, every other run of characters one
 * `-`, no leading dot or dash (no hidden folder, no flag), at most MAX_FOLDER characters; `run` when nothing is left.
 */
export function exportFolderName(runName: string, step: number): string {
  const suffix = `-step${Math.max(0, Math.floor(step))}`;
  const base =
    runName
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/-{2,}/g, '-')
      .replace(/^[.-]+/, '')
      .replace(/[.-]+$/, '')
      .slice(0, MAX_FOLDER - suffix.length - '-adapter'.length)
      .replace(/[.-]+$/, '') || 'run';
  return `${base}${suffix}`;
}

type JsonObject = Record<string, unknown>;

function objectOf(text: string, file: string): JsonObject {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`export: ${file} is not valid JSON (${(e as Error).message})`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`export: ${file} is not a JSON object`);
  return v as JsonObject;
}

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

/** The same object with its keys sorted at every level (PEFT writes adapter_config.json so). */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortedKeys((v as JsonObject)[k])]),
  );
}

/** The content of each added token of a tokenizer.json by id (special tokens' text for a built tokenizer_config). */
function addedTokens(tokenizerJson: string): Map<number, string> {
  const t = objectOf(tokenizerJson, hf.tokenizer_file);
  const out = new Map<number, string>();
  if (Array.isArray(t.added_tokens))
    for (const a of t.added_tokens as { id?: unknown; content?: unknown }[])
      if (typeof a?.id === 'number' && typeof a.content === 'string') out.set(a.id, a.content);
  return out;
}

/**
 * tokenizer_config.json for a tokenizer.json kept without one (the lab's character vocabulary): the fast tokenizer
 * class and the special tokens config.json names, so AutoTokenizer loads it with the same ids.
 */
function builtTokenizerConfig(tokenizerJson: string, config: JsonObject): JsonObject {
  const tokens = addedTokens(tokenizerJson);
  const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);
  const text = (key: string) => {
    const id = first(config[key]);
    return typeof id === 'number' ? (tokens.get(id) ?? null) : null;
  };
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    bos_token: text('bos_token_id'),
    eos_token: text('eos_token_id'),
    pad_token: text('pad_token_id'),
    clean_up_tokenization_spaces: false,
    model_max_length: typeof config.max_position_embeddings === 'number' ? config.max_position_embeddings : 2048,
  };
}

/** special_tokens_map.json as save_pretrained derives it: each special-token attribute tokenizer_config.json sets. */
function specialTokensMap(tokenizerConfig: JsonObject): JsonObject | null {
  const out: JsonObject = {};
  for (const key of hf.special_tokens_attributes) {
    const v = tokenizerConfig[key];
    if (v === null || v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    out[key] = v;
  }
  return Object.keys(out).length ? out : null;
}

/** The run's config.json with the source model's own eos_token_id (when the source config.json names one). */
function withSourceEos(config: JsonObject, sourceConfigJson: string | null): JsonObject {
  if (sourceConfigJson === null) return config;
  const source = objectOf(sourceConfigJson, `the source model's ${hf.config_file}`);
  const eos = source.eos_token_id;
  if (eos === undefined || eos === null || JSON.stringify(eos) === JSON.stringify(config.eos_token_id)) return config;
  return { ...config, eos_token_id: eos };
}

/** generation_config.json: the source model's, else the end-of-sequence, start and padding ids config.json names. */
function generationConfig(source: string | null, config: JsonObject): string {
  if (source !== null) {
    objectOf(source, hf.generation_config_file);
    return source;
  }
  const ids: JsonObject = { _from_model_config: true };
  for (const key of ['bos_token_id', 'eos_token_id', 'pad_token_id'])
    if (config[key] !== undefined && config[key] !== null) ids[key] = config[key];
  return json(ids);
}

/**
 * The weights as transformers' save_pretrained lays them out: one model.safetensors when the tensors fit in
 * `maxShardBytes`, else shards filled in tensor order (a shard is closed when the next tensor would pass the limit; a
 * tensor larger than the limit gets a shard of its own) and the index naming each tensor's shard, its metadata's
 * total_size the tensors' bytes. The shards hold views of the checkpoint's tensors until they are written.
 */
function weightFiles(bytes: Uint8Array, maxShardBytes: number): { name: string; data: Uint8Array | string }[] {
  const header = readSafetensorsHeader(bytes);
  const sizes = [...header.entries].map(([name, e]) => [name, e.dataOffsets[1] - e.dataOffsets[0]] as const);
  const total = sizes.reduce((n, [, b]) => n + b, 0);
  if (total <= maxShardBytes) return [{ name: hf.weights_file, data: bytes }];
  const groups: string[][] = [];
  let size = 0;
  for (const [name, b] of sizes) {
    if (!groups.length || (size + b > maxShardBytes && size > 0)) {
      groups.push([]);
      size = 0;
    }
    groups[groups.length - 1].push(name);
    size += b;
  }
  const { tensors, metadata } = readSafetensors(bytes);
  const pad = (n: number) => String(n).padStart(5, '0');
  const weightMap: Record<string, string> = {};
  const shards = groups.map((names, i) => {
    const file = `model-${pad(i + 1)}-of-${pad(groups.length)}.safetensors`;
    const part = new Map<string, SafetensorsTensor>();
    for (const n of names) {
      part.set(n, tensors.get(n)!);
      weightMap[n] = file;
    }
    return { name: file, data: writeSafetensors(part, metadata ?? { format: 'pt' }) };
  });
  return [
    ...shards,
    { name: hf.weights_index_file, data: json({ metadata: { total_size: total }, weight_map: weightMap }) },
  ];
}

/** README.md of the adapter folder: the model card front matter PEFT writes, and how to load it. */
function adapterCard(baseModel: string | null, folder: string): string {
  const front = [
    '---',
    ...(baseModel === null ? [] : [`base_model: ${pyString(baseModel)}`]),
    'library_name: peft',
    'pipeline_tag: text-generation',
    'tags:',
    ...[...(baseModel === null ? [] : [`base_model:adapter:${baseModel}`]), 'lora', 'transformers']
      .sort()
      .map((t) => `- ${pyString(t)}`),
    '---',
  ];
  const base = baseModel === null ? 'the base model' : `\`${pyString(baseModel, '`')}\``;
  return `${front.join('\n')}

# ${folder}

A LoRA adapter trained with RL Lab, in PEFT's layout. Load it on ${base}:

\`\`\`python
from peft import PeftModel
from transformers import AutoModelForCausalLM
base = AutoModelForCausalLM.from_pretrained(${pyString(baseModel ?? 'path/to/base')})
model = PeftModel.from_pretrained(base, ${pyString(folder)})
\`\`\`

The merged model (base weights plus these adapters) is the folder \`${folder.replace(/-adapter$/, '')}\` beside this one.

### Framework versions

- RL Lab export (adapter_config.json as PEFT's LoraConfig writes it)
`;
}

/**
 * The export of a policy's files: the model folder and, when the files hold adapters, the adapter folder. The
 * weights are the merged checkpoint (a LoRA run's adapters folded into its base) in float32 (EXPORT_DTYPE_NOTE).
 */
export function hfExport(input: HfExportInput): HfExport {
  const folder = exportFolderName(input.runName, input.policy.step);
  const byName = new Map(input.policy.files.map((f) => [f.name, f.data]));
  const need = (name: string) => {
    const v = byName.get(name);
    if (v === undefined) throw new Error(`export: the run's checkpoint has no ${name}`);
    return v;
  };
  const text = (name: string) => {
    const v = need(name);
    return typeof v === 'string' ? v : new TextDecoder().decode(v);
  };
  const runConfig = objectOf(text(hf.config_file), hf.config_file);
  const config = withSourceEos(runConfig, input.sourceConfigJson ?? null);
  const configJson = config === runConfig ? text(hf.config_file) : json(config);
  const tokenizerJson = text(hf.tokenizer_file);
  const keptTokenizerConfig = byName.has(hf.tokenizer_config_file) ? text(hf.tokenizer_config_file) : null;
  const tokenizerConfig =
    keptTokenizerConfig === null
      ? builtTokenizerConfig(tokenizerJson, config)
      : objectOf(keptTokenizerConfig, hf.tokenizer_config_file);
  const special = specialTokensMap(tokenizerConfig);
  const at = (name: string) => `${folder}/${name}`;
  const files: HfExportFile[] = [
    ...weightFiles(need(hf.weights_file) as Uint8Array, input.maxShardBytes ?? hf.max_shard_bytes).map((f) => ({
      path: at(f.name),
      data: f.data,
    })),
    { path: at(hf.config_file), data: configJson },
    { path: at(hf.generation_config_file), data: generationConfig(input.sourceGenerationConfigJson, config) },
    { path: at(hf.tokenizer_file), data: tokenizerJson },
    { path: at(hf.tokenizer_config_file), data: keptTokenizerConfig ?? json(tokenizerConfig) },
    ...(special ? [{ path: at(hf.special_tokens_map_file), data: json(special) }] : []),
  ];
  const adapterWeights = byName.get(`${POLICY_ADAPTER_DIR}/${peft.weights_file}`);
  if (adapterWeights === undefined) return { folder, adapterFolder: null, files };
  const adapterFolder = `${folder}-adapter`;
  const adapterConfig = objectOf(text(`${POLICY_ADAPTER_DIR}/${peft.config_file}`), peft.config_file);
  adapterConfig.base_model_name_or_path = input.baseModel;
  files.push(
    { path: `${adapterFolder}/${peft.config_file}`, data: json(sortedKeys(adapterConfig)) },
    { path: `${adapterFolder}/${peft.weights_file}`, data: adapterWeights },
    {
      path: `${adapterFolder}/${peft.save_pretrained.model_card_file}`,
      data: adapterCard(input.baseModel, adapterFolder),
    },
  );
  return { folder, adapterFolder, files };
}

/** The two lines of Python that load an export, for the UI and the CLI's message. */
export function loadingLines(e: Pick<HfExport, 'folder' | 'adapterFolder'>, baseModel: string | null): string[] {
  const lines = [`AutoModelForCausalLM.from_pretrained(${pyString(e.folder)})`];
  if (e.adapterFolder)
    lines.push(
      `PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(${pyString(baseModel ?? 'path/to/base')}), ${pyString(e.adapterFolder)})`,
    );
  return lines;
}
