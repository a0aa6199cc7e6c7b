// Renders an experiment (an RL config, its preset and a model) as the files another trainer runs: a TRL Python
// script, a verl `main_ppo` launch script with its reward module, an OpenRLHF `train_ppo_ray` launch script with
// its reward module, the prompts as JSONL, and a README with the mapping table. Pure text generation over the
// mapping rows (mapping.ts); no file system, so the page and the CLI share it.

import {
  FIELD_NAMES,
  FIELD_SPECS,
  PRESET_INFO,
  derive,
  taskOf,
  type PresetName,
  type RLConfig,
  type RLField,
} from '../schema/config';
import { PROMPT_LIST_TASK } from '../tasks';
import { exportItems, exportTeacherIdOf, jsonl, plainRow, rowCounts, verlRow } from './data';
import {
  ExportValueError,
  checkModelName,
  checkWritable,
  commentText,
  hydraWord,
  markdownLiteral,
  pyString,
  shellQuote,
  shellWord,
} from '../core/quote';
import VERIFIERS_PY from './verifiers.py?raw';
import { encodePrompt } from '../io/encode-prompt';
import type { Tokenizer } from '../io/tokenizer';
import { booleanForm } from './declarations';
import {
  TARGET_LABELS,
  estimatorRefusal,
  loraTargetsOf,
  mappingRows,
  labValueText,
  trlClassOf,
  type ExportTarget,
  type MappingRow,
  type Setting,
  type SettingValue,
} from './mapping';
import openrlhfFields from './fixtures/openrlhf.json';
import trlFields from './fixtures/trl.json';
import verlFields from './fixtures/verl.json';

/** One file of an export: its path inside the export folder and its text. */
export interface ExportFile {
  path: string;
  text: string;
}

/** An experiment exported for one trainer. */
export interface Export {
  target: ExportTarget;
  /** The file to run (a path among `files`). */
  entry: string;
  files: ExportFile[];
  /** Every field of the config and what it became. */
  rows: MappingRow[];
  /** Every key the export writes in the trainer's config or command line, the mapped ones and the run's own. */
  keys: string[];
}

export interface ExportOptions {
  /** The preset the config started from; null for a config edited away from every preset. */
  preset: PresetName | null;
  /** The starting weights: a path to a Hugging Face format checkpoint, or a hub model name. */
  model: string;
  /** Prompts per split at most; the default writes the run's prompts (data.ts rowCounts). */
  maxRows?: number;
  /**
   * The lab model's tokenizer (its chat template inside), to count verl's data.max_prompt_length in the model's
   * tokens; without one the export writes the lab's count in characters and says so.
   */
  tokenizer?: Tokenizer;
  /**
   * verl's data.max_prompt_length counted where the tokenizer is (verlPromptLengthOf: the page's export gets it from
   * the worker, which reads the model's tokenizer); used instead of `tokenizer`.
   */
  promptLength?: PromptLength;
}

/** verl's data.max_prompt_length and how it was counted. */
export interface PromptLength {
  value: number;
  note: string;
}

/**
 * verl's data.max_prompt_length: the longest exported prompt in the model's tokens with its chat template applied
 * (verl's RLHFDataset applies the template to the chat-message prompts the export writes, then filters or truncates
 * past this length), by the lab's own prompt encoding (io/encode-prompt.ts).
 */
function verlPromptLength(c: RLConfig, prompts: readonly string[], tok: Tokenizer | undefined): PromptLength {
  if (!tok)
    return {
      value: derive(c).maxPromptTokens,
      note: "the task's longest prompt in characters + 1: no tokenizer was given (npm run export counts the model's tokens)",
    };
  const chat = tok.applyChatTemplate !== null;
  const value = Math.max(...prompts.map((p) => encodePrompt(tok, p, chat).length));
  return {
    value,
    note: chat
      ? "the longest prompt in the model's tokens, its chat template applied as verl applies it"
      : "the longest prompt in the model's tokens; this tokenizer has no chat template, which verl's dataset applies",
  };
}

/** The folder (relative to the export) a run's model defaults to when no model is named: the lab's checkpoint in Hugging Face format. */
export const DEFAULT_MODEL_PATH = 'checkpoint';

/** The version of each trainer the export was written against (the fixtures' source). */
export const TARGET_VERSIONS: Readonly<Record<ExportTarget, string>> = {
  trl: `${trlFields.repo} @ ${trlFields.commit.slice(0, 7)} (${trlFields.version})`,
  verl: `${verlFields.repo} @ ${verlFields.commit.slice(0, 7)} (${verlFields.version})`,
  openrlhf: `${openrlhfFields.repo} ${openrlhfFields.version} @ ${openrlhfFields.commit.slice(0, 7)}`,
};

/**
 * The config's text fields that are code or data of several lines (the person's reward function, the prompt
 * list): each is written as its own file of the export, exactly as given, and named in comments, never inlined.
 */
export const VALUE_FILES: Readonly<Partial<Record<RLField, string>>> = {
  reward_fn: 'user_reward_fn.js',
  prompts: 'prompt_list.txt',
};

/** The file of a multi-line text field (VALUE_FILES, else `<field>.txt`); null for one-line fields. */
export function valueFileOf(field: RLField): string | null {
  const spec = FIELD_SPECS[field];
  if (spec.kind !== 'string' || !spec.multiline) return null;
  return VALUE_FILES[field] ?? `${field}.txt`;
}

/**
 * The exact config, as JSON with its preset, in every export: `npm run train -- --config lab_config.json` runs it
 * in the lab, and `npm run export -- --config lab_config.json` writes the same export.
 */
export const CONFIG_FILE = 'lab_config.json';

// ---------------------------------------------------------------------------------------------------------
// Value syntax of each target (quote.ts quotes every string).

function pyValue(field: string, v: SettingValue): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return pyString(v);
  if (typeof v === 'number') return numberText(field, v);
  return `[${v.map((x: number | string) => (typeof x === 'string' ? pyString(x) : numberText(field, x))).join(', ')}]`;
}

/** A number as every target reads it; a non-finite one has no literal in them and is refused. */
function numberText(field: string, v: number): string {
  if (!Number.isFinite(v)) throw new ExportValueError(`${field}: ${v} has no literal in the exported files`);
  return String(v);
}

/** A Python list of strings. */
function pyList(items: readonly string[]): string {
  return `[${items.map((s) => pyString(s)).join(', ')}]`;
}

/** A value as a Hydra override writes it (verl); strings of plain characters only (quote.ts hydraWord). */
function hydraValue(field: string, v: SettingValue): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return numberText(field, v);
  if (typeof v === 'string') return hydraWord(field, v);
  return `[${v.map((x: number | string) => (typeof x === 'string' ? hydraWord(field, x) : numberText(field, x))).join(',')}]`;
}

/**
 * An OpenRLHF flag and its value as shell words. A boolean is a switch there (declarations.ts: store_true), given
 * bare when true; mapping.ts leaves out a false one.
 */
function shellWords(field: string, s: Setting): string {
  const v = s.value;
  if (typeof v === 'boolean') {
    if (booleanForm('openrlhf', s.key) !== 'switch' || !v)
      throw new Error(`export: ${s.key} ${v} is not a switch OpenRLHF takes bare`);
    return s.key;
  }
  const values =
    typeof v === 'string'
      ? [v]
      : typeof v === 'number'
        ? [numberText(field, v)]
        : v.map((x: number | string) => (typeof x === 'string' ? x : numberText(field, x)));
  return [s.key, ...values].map((w) => shellWord(field, w)).join(' ');
}

/**
 * A lab value as comments and the README show it: numbers, booleans, null and weights as they are (they hold no
 * special character; weights are checked), strings as escaped literals (`literal`), and a multi-line text field
 * as the name of its own file.
 */
function labValue(field: RLField, v: unknown, literal: (s: string) => string): string {
  if (v === null) return 'null';
  if (typeof v === 'string') {
    const file = valueFileOf(field);
    return file ? `(${v.length} characters, in ${file})` : literal(v);
  }
  const text = labValueText(v);
  return /^[\w.,:+-]*$/.test(text) ? text : literal(text);
}

/** One mapping row as a comment line: the field, its value as a literal, and what it became (escaped). */
function rowComment(r: MappingRow, c: RLConfig): string {
  return `# ${r.field} = ${labValue(r.field, c[r.field], (s) => pyString(s))}${r.comment ? `: ${commentText(oneLine(r.comment))}` : ''}`;
}

/** A comment's text on one line (comments are written as `# ...`). */
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

function header(c: RLConfig, preset: PresetName | null, target: ExportTarget, how: string): string[] {
  return [
    `RL Lab experiment: ${preset ? `preset ${preset} (${PRESET_INFO[preset].label})` : 'a custom config'}, task ${c.task} at difficulty ${derive(c).difficulty}, ${c.steps} steps.`,
    `Exported for ${TARGET_LABELS[target]}, written against ${TARGET_VERSIONS[target]}.`,
    how,
    'Every lab field appears below: as a setting, or as a comment saying what it became or that there is no equivalent.',
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Reward modules: the lab's verifiers in Python (verifiers.py, checked against src/tasks/ by
// scripts/check-python-verifiers.ts), with the task, difficulty and reward weights of the experiment.

function rewardDoc(c: RLConfig): string[] {
  const d = derive(c);
  const w = Object.entries(d.rewardWeights)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return [
    `Reward for the lab's task "${c.task}" at difficulty ${d.difficulty}: the lab's verifier (src/tasks/) ported to Python, the sum of`,
    `its reward parts times their weights (${w}), as the lab computes it; the port agrees with the TypeScript verifier part by part`,
    "(scripts/check-python-verifiers.ts). DAPO's overlong shaping is not in it: verl's DAPO reward manager and OpenRLHF's",
    '--reward.overlong_buffer_len add it where the experiment turns it on.',
    ...(c.reward_fn === null
      ? []
      : [
          `The experiment's own reward function (reward_fn, JavaScript) is the file ${VALUE_FILES.reward_fn}, as written; it is not`,
          'ported and nothing here runs it, so its weight (user) scores 0 in the Python reward.',
        ]),
    ...(c.reward_model === null
      ? []
      : ['The learned reward (reward_model) is not ported: its weight (reward_model) scores 0 in the Python reward.']),
  ].map(commentText);
}

/** The verifiers and the experiment's constants, as the head of every reward module. */
function rewardModule(c: RLConfig): string[] {
  const d = derive(c);
  return [
    ...rewardDoc(c).map((l) => `# ${l}`),
    '',
    VERIFIERS_PY.trimEnd(),
    '',
    '',
    '# The experiment.',
    `TASK = ${pyString(c.task)}`,
    `DIFFICULTY = ${numberText('difficulty', d.difficulty)}`,
    `WEIGHTS = {${Object.entries(d.rewardWeights)
      .map(([k, v]) => `${pyString(k)}: ${numberText('reward_weights', v)}`)
      .join(', ')}}`,
    '',
  ];
}

function verlReward(c: RLConfig): string {
  return [
    ...rewardModule(c),
    '',
    '# verl calls compute_score(data_source, solution_str, ground_truth, extra_info) per response (custom_reward_function);',
    '# the prompt the verifier parses is in extra_info (data/*.jsonl), the canonical answer in ground_truth.',
    'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
    '    return reward(TASK, DIFFICULTY, extra_info["prompt"], solution_str, WEIGHTS)',
    '',
  ].join('\n');
}

function openrlhfReward(c: RLConfig): string {
  return [
    ...rewardModule(c),
    '',
    '# OpenRLHF loads reward_func(queries, prompts, labels) from a .py file given as --reward.remote_url; a query is',
    '# the prompt and the response decoded with special tokens, so the response is what follows the prompt, less',
    '# trailing special tokens.',
    'import torch',
    '',
    "TRAILING_SPECIAL = re.compile(r'(?:<\\|[^|]*\\|>|</s>)+\\s*$')",
    '',
    '',
    'def reward_func(queries, prompts, labels):',
    "    responses = [TRAILING_SPECIAL.sub('', q[len(p):]) for q, p in zip(queries, prompts)]",
    '    scores = torch.tensor([reward(TASK, DIFFICULTY, p, r, WEIGHTS) for p, r in zip(prompts, responses)])',
    "    return {'rewards': scores, 'scores': scores, 'extra_logs': {}}",
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// TRL

function renderTrl(
  c: RLConfig,
  preset: PresetName | null,
  model: string,
  rows: MappingRow[],
  evalOn: boolean,
): { text: string; keys: string[] } {
  const cls = trlClassOf(c);
  const trainer = cls.replace('Config', 'Trainer');
  const module = cls === 'PPOConfig' ? 'trl.experimental.ppo' : 'trl';
  const keys = [
    'output_dir',
    'report_to',
    'logging_steps',
    'use_cpu',
    'bf16',
    ...(cls === 'GRPOConfig' ? ['reward_weights'] : []),
  ];
  // LoRA: PEFT's config for the trainer, the lab's rank, alpha and projections (all-linear adapts the same seven).
  const lora =
    c.lora_rank > 0 && cls !== 'PPOConfig'
      ? `    peft_config=LoraConfig(r=${numberText('lora_rank', c.lora_rank)}, lora_alpha=${numberText('lora_alpha', c.lora_alpha)}, lora_dropout=0.0, target_modules=${c.lora_targets === null ? '"all-linear"' : pyList(loraTargetsOf(c))}, task_type="CAUSAL_LM"),`
      : null;
  const lines: string[] = [
    ...header(
      c,
      preset,
      'trl',
      'Run: python train_trl.py [--model PATH_OR_HUB_NAME] (the data/ folder beside it holds the prompts).',
    ).map((l) => `# ${commentText(l)}`),
    'import argparse',
    '',
    'import torch',
    'from datasets import load_dataset',
    ...(lora ? ['from peft import LoraConfig'] : []),
    `from ${module} import ${cls}, ${trainer}`,
    '',
    ...rewardModule(c),
    '',
    '# TRL passes the prompts and completions (plain text: the prompts are not chat messages) to each reward function.',
    'def lab_reward(prompts, completions, **kwargs):',
    '    return [reward(TASK, DIFFICULTY, p, c, WEIGHTS) for p, c in zip(prompts, completions)]',
    '',
    '',
    'parser = argparse.ArgumentParser()',
    `parser.add_argument("--model", default=${pyString(model)}, help="a Hugging Face format checkpoint folder or a hub model name")`,
    'args = parser.parse_args()',
    '',
    `train = load_dataset("json", data_files="data/train.jsonl", split="train")`,
    ...(evalOn ? [`heldout = load_dataset("json", data_files="data/heldout.jsonl", split="train")`] : []),
    '',
    `config = ${cls}(`,
    '    output_dir="out",',
    '    report_to="none",',
    '    logging_steps=1,  # every optimizer step in out/trainer_state.json, as the lab logs every step',
    '    # Without a GPU (a laptop) the run trains on the CPU; bf16, which TRL turns on by default, only where the GPU has it.',
    '    use_cpu=not torch.cuda.is_available(),',
    '    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),',
    ...(cls === 'GRPOConfig'
      ? ['    reward_weights=[1.0],  # one reward function, lab_reward; it applies the weights of the lab (WEIGHTS)']
      : []),
  ];
  for (const r of rows) {
    lines.push(`    ${rowComment(r, c)}`);
    for (const s of r.settings) {
      lines.push(`    ${s.key}=${pyValue(r.field, s.value)},`);
      keys.push(s.key);
    }
  }
  lines.push(')', '');
  if (cls === 'PPOConfig') {
    lines.push(
      "# TRL's PPOTrainer scores completions with a reward model (reward_model_path), not a function, and trains a",
      '# value model beside the policy; the lab scores with its verifier. Train a reward model on lab_reward above,',
      '# or export this experiment to verl or OpenRLHF, which take a reward function with a critic.',
      'raise SystemExit("PPOConfig is written above; TRL PPO needs a reward model where the lab uses a verifier (see the comment)")',
      '',
    );
  } else {
    lines.push(
      `trainer = ${trainer}(`,
      '    model=args.model,',
      '    reward_funcs=[lab_reward],',
      '    args=config,',
      '    train_dataset=train,',
      ...(evalOn ? ['    eval_dataset=heldout,'] : []),
      ...(lora ? [lora] : []),
      ')',
      'trainer.train()',
      "# out/trainer_state.json: the run's log, which the lab imports (Runs: import a trainer log).",
      'trainer.save_state()',
      '',
    );
  }
  return { text: lines.join('\n'), keys };
}

// ---------------------------------------------------------------------------------------------------------
// verl

/**
 * The launch scripts' MODEL: the environment's when set and not empty, else the export's model as a single-quoted
 * literal (a default inside "${MODEL:-...}" would be expanded by the shell).
 */
function modelDefault(model: string): string[] {
  return ['MODEL="${MODEL:-}"', `[ -n "$MODEL" ] || MODEL=${shellQuote('hf-model', model)}`];
}

function renderVerl(
  c: RLConfig,
  preset: PresetName | null,
  model: string,
  rows: MappingRow[],
  evalOn: boolean,
  promptLength: PromptLength,
): { text: string; keys: string[] } {
  const d = derive(c);
  const own: Setting[] = [
    { key: 'actor_rollout_ref.rollout.name', value: 'vllm' },
    { key: 'data.max_prompt_length', value: promptLength.value },
    // The update's micro-batches (actor and critic) are the gradient_accumulation_steps row's (mapping.ts).
    { key: 'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu', value: 1 },
    { key: 'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu', value: 1 },
    { key: 'custom_reward_function.name', value: 'compute_score' },
    { key: 'trainer.logger', value: 'console' },
  ];
  const keys = [
    'data.train_files',
    'data.val_files',
    'actor_rollout_ref.model.path',
    ...(d.needsCritic ? ['critic.model.path'] : []),
    'custom_reward_function.path',
    'trainer.n_gpus_per_node',
    'trainer.nnodes',
    ...own.map((s) => s.key),
  ];
  const word = (field: string, s: Setting) =>
    `  ${shellQuote(field, `${s.added ? '+' : ''}${s.key}=${hydraValue(field, s.value)}`)}`;
  const lines = [
    '#!/usr/bin/env bash',
    ...header(
      c,
      preset,
      'verl',
      'Run: MODEL=<checkpoint folder or hub name> GPUS=<n> bash run_verl.sh [more key=value overrides].',
    ).map((l) => `# ${commentText(l)}`),
    "# verl's dataset reads parquet: the first step converts data/*.jsonl (verl's row layout) with pandas.",
    'set -euo pipefail',
    'HERE="$(cd "$(dirname "$0")" && pwd)"',
    ...modelDefault(model),
    'GPUS="${GPUS:-1}"',
    `python3 -c 'import pandas as pd, sys; [pd.read_json(f"{sys.argv[1]}/data/{s}.jsonl", lines=True).to_parquet(f"{sys.argv[1]}/data/{s}.parquet") for s in ("train", "heldout")]' "$HERE"`,
    'ARGS=(',
    '  "data.train_files=$HERE/data/train.parquet"',
    '  "data.val_files=$HERE/data/heldout.parquet"',
    '  "actor_rollout_ref.model.path=$MODEL"',
    ...(d.needsCritic ? ['  "critic.model.path=$MODEL"'] : []),
    '  "custom_reward_function.path=$HERE/reward_fn.py"',
    '  "trainer.n_gpus_per_node=$GPUS"',
    "  'trainer.nnodes=1'",
    `  # data.max_prompt_length: ${commentText(promptLength.note)}`,
    ...own.map((s) => word(s.key, s)),
  ];
  if (!evalOn)
    lines.push(
      '  # the lab never evaluates: data.val_files still names the held-out file (verl needs one); trainer.test_freq is -1',
    );
  for (const r of rows) {
    lines.push(`  ${rowComment(r, c)}`);
    for (const s of r.settings) {
      lines.push(word(r.field, s));
      keys.push(s.key);
    }
  }
  lines.push(')', 'python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"', '');
  return { text: lines.join('\n'), keys };
}

// ---------------------------------------------------------------------------------------------------------
// OpenRLHF

function renderOpenrlhf(
  c: RLConfig,
  preset: PresetName | null,
  model: string,
  rows: MappingRow[],
  evalOn: boolean,
): { text: string; keys: string[] } {
  const d = derive(c);
  const keys = [
    '--actor.model_name_or_path',
    ...(d.needsCritic ? ['--critic.model_name_or_path'] : []),
    '--data.prompt_dataset',
    '--data.input_key',
    '--data.label_key',
    '--reward.remote_url',
    '--ckpt.output_dir',
    ...(evalOn ? ['--eval.dataset'] : []),
  ];
  const lines = [
    '#!/usr/bin/env bash',
    ...header(
      c,
      preset,
      'openrlhf',
      'Run on a Ray cluster: MODEL=<checkpoint folder or hub name> bash run_openrlhf.sh [more flags].',
    ).map((l) => `# ${commentText(l)}`),
    'set -euo pipefail',
    'HERE="$(cd "$(dirname "$0")" && pwd)"',
    ...modelDefault(model),
    'ARGS=(',
    '  --actor.model_name_or_path "$MODEL"',
    ...(d.needsCritic ? ['  --critic.model_name_or_path "$MODEL"'] : []),
    '  --data.prompt_dataset "$HERE/data/train.jsonl"',
    '  --data.input_key prompt',
    '  --data.label_key answer',
    '  --reward.remote_url "$HERE/reward_func.py"',
    '  --ckpt.output_dir "$HERE/out"',
    ...(evalOn ? ['  --eval.dataset "$HERE/data/heldout.jsonl"'] : []),
  ];
  for (const r of rows) {
    lines.push(`  ${rowComment(r, c)}`);
    for (const s of r.settings) {
      lines.push(`  ${shellWords(r.field, s)}`);
      keys.push(s.key);
    }
  }
  lines.push(')', 'python3 -m openrlhf.cli.train_ppo_ray "${ARGS[@]}" "$@"', '');
  return { text: lines.join('\n'), keys };
}

// ---------------------------------------------------------------------------------------------------------

const ENTRY: Readonly<Record<ExportTarget, string>> = {
  trl: 'train_trl.py',
  verl: 'run_verl.sh',
  openrlhf: 'run_openrlhf.sh',
};

/** Text for a Markdown table cell: one line, pipes escaped, nothing raw that a literal escapes. */
function cell(s: string): string {
  return commentText(oneLine(s)).replace(/\|/g, '\\|');
}

/** A setting's value as the table shows it: the override text for verl, plain words as they are, else a literal. */
function tableValue(target: ExportTarget, field: string, v: SettingValue): string {
  if (target === 'verl' || typeof v !== 'string') return hydraValue(field, v);
  return /^[\w./-]+$/.test(v) ? v : markdownLiteral(v);
}

/** The mapping table of one export as Markdown: lab field, lab value, the trainer's settings, the comment. */
export function mappingTable(target: ExportTarget, rows: readonly MappingRow[], c: RLConfig): string {
  const settingText = (field: string, s: Setting) =>
    `\`${s.added ? '+' : ''}${s.key}=${tableValue(target, field, s.value)}\``;
  return [
    `| lab field | lab value | ${TARGET_LABELS[target]} | note |`,
    '|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| \`${r.field}\` | \`${labValue(r.field, c[r.field], markdownLiteral)}\` | ${r.settings.length ? r.settings.map((s) => settingText(r.field, s)).join(' ') : 'none'} | ${cell(r.comment ?? '')} |`,
    ),
  ].join('\n');
}

/** What each file of an export holds, for the README's list. */
function fileNote(target: ExportTarget, path: string): string {
  if (path === ENTRY[target]) return 'the file to run';
  if (path === CONFIG_FILE)
    return "the lab's config as it was exported, exactly (`npm run train -- --config lab_config.json` runs it in the lab)";
  if (path.startsWith('data/')) return 'the prompts the run reads, one JSON object per line';
  if (path === VALUE_FILES.reward_fn)
    return 'your reward function (reward_fn), exactly as written: JavaScript the lab runs in its sandbox; nothing here runs it';
  if (path === VALUE_FILES.prompts) return 'your prompt list (prompts), exactly as written; its rows are in data/';
  if (path.endsWith('.py')) return "the reward: the lab's verifier in Python";
  return '';
}

function readme(
  c: RLConfig,
  preset: PresetName | null,
  target: ExportTarget,
  rows: readonly MappingRow[],
  files: readonly string[],
): string {
  return [
    `# ${TARGET_LABELS[target]} export of an RL Lab experiment`,
    '',
    ...header(c, preset, target, `Entry: \`${ENTRY[target]}\`.`).map(commentText),
    '',
    '## Files',
    '',
    ...files.map((f) => `- \`${f}\`${fileNote(target, f) ? `: ${fileNote(target, f)}` : ''}`),
    '',
    'Every value of the config is written as a quoted literal (or, for a text of several lines, as its own file named',
    'in the comments), so no value changes what the scripts do.',
    '',
    '## The model',
    '',
    `The model is a parameter. By default the run starts from \`${DEFAULT_MODEL_PATH}/\` beside this file: put the lab's checkpoint there in Hugging Face format (the Llama layout the lab writes), or name a hub model instead.`,
    "Token counts (max_completion_length and its relatives) were the lab's characters; a real tokenizer spends fewer tokens per character, so they are upper bounds there.",
    '',
    '## Reward',
    '',
    ...rewardDoc(c),
    '',
    '## Mapping',
    '',
    mappingTable(target, rows, c),
    '',
  ].join('\n');
}

/** Refuses, naming the field, a config whose text a file cannot hold or whose prompt list cannot be read. */
function checkExportable(c: RLConfig): void {
  for (const field of FIELD_NAMES) {
    const v = c[field];
    if (typeof v === 'string') checkWritable(field, v);
  }
  if (c.task === PROMPT_LIST_TASK) {
    try {
      taskOf(c);
    } catch (e) {
      throw new ExportValueError(`prompts: ${(e as Error).message}`);
    }
  }
}

/**
 * An experiment as the files one trainer runs (every field mapped or commented), with the keys it writes. Throws
 * ExportValueError naming the field when a value cannot be written (quote.ts).
 */
/** The items an export writes: the run's training prompts and its held-out ones, `maxRows` per split at most. */
function exportSplits(c: RLConfig, maxRows: number | undefined) {
  const counts = rowCounts(c);
  const cap = (n: number) => Math.min(n, maxRows ?? n);
  return {
    train: exportItems(c, 'train', cap(counts.train)),
    heldout: exportItems(c, 'heldout', cap(Math.max(counts.heldout, 1))),
  };
}

/**
 * verl's data.max_prompt_length of the export of `c` (`maxRows` as exportExperiment's): the longest prompt it writes
 * in `tokenizer`'s tokens, its chat template applied; without a tokenizer the task's length in characters + 1.
 */
export function verlPromptLengthOf(c: RLConfig, tokenizer: Tokenizer | undefined, maxRows?: number): PromptLength {
  const { train, heldout } = exportSplits(c, maxRows);
  return verlPromptLength(
    c,
    [...train, ...heldout].map((it) => it.prompt),
    tokenizer,
  );
}

export function exportExperiment(target: ExportTarget, c: RLConfig, options: ExportOptions): Export {
  const model = checkModelName('hf-model', options.model);
  checkExportable(c);
  const refusal = estimatorRefusal(target, c);
  if (refusal) throw new ExportValueError(`adv_estimator: ${refusal}`);
  const rows = mappingRows(target, c);
  const evalOn = c.eval_every > 0 && c.eval_items > 0;
  const { train, heldout } = exportSplits(c, options.maxRows);
  const promptLength =
    target === 'verl'
      ? (options.promptLength ??
        verlPromptLength(
          c,
          [...train, ...heldout].map((it) => it.prompt),
          options.tokenizer,
        ))
      : null;
  const { text, keys } =
    target === 'verl'
      ? renderVerl(c, options.preset, model, rows, evalOn, promptLength!)
      : { trl: renderTrl, openrlhf: renderOpenrlhf }[target](c, options.preset, model, rows, evalOn);
  const files: ExportFile[] = [{ path: ENTRY[target], text }];
  if (target === 'verl') {
    files.push({ path: 'reward_fn.py', text: verlReward(c) });
    files.push({ path: 'data/train.jsonl', text: jsonl(train.map((it, i) => verlRow(c, it, 'train', i))) });
    files.push({ path: 'data/heldout.jsonl', text: jsonl(heldout.map((it, i) => verlRow(c, it, 'heldout', i))) });
  } else {
    if (target === 'openrlhf') files.push({ path: 'reward_func.py', text: openrlhfReward(c) });
    const teacherOf = exportTeacherIdOf(c);
    files.push({ path: 'data/train.jsonl', text: jsonl(train.map((it) => plainRow(it, teacherOf(it)))) });
    files.push({ path: 'data/heldout.jsonl', text: jsonl(heldout.map((it) => plainRow(it, teacherOf(it)))) });
  }
  for (const field of FIELD_NAMES) {
    const file = valueFileOf(field);
    const v = c[field];
    if (file && typeof v === 'string') files.push({ path: file, text: v });
  }
  const withPreset = options.preset === null ? c : { preset: options.preset, ...c };
  files.push({ path: CONFIG_FILE, text: `${JSON.stringify(withPreset, null, 2)}\n` });
  files.push({ path: 'README.md', text: readme(c, options.preset, target, rows, [...files.map((f) => f.path)]) });
  return { target, entry: ENTRY[target], files, rows, keys };
}

/** The delimiter of the bundle's here-documents: RL_LAB_EXPORT_EOF, numbered until no file has it as a line. */
function bundleDelimiter(files: readonly ExportFile[]): string {
  const lines = new Set(files.flatMap((f) => f.text.split('\n')));
  let eof = 'RL_LAB_EXPORT_EOF';
  for (let i = 1; lines.has(eof); i++) eof = `RL_LAB_EXPORT_EOF_${i}`;
  return eof;
}

/**
 * Every file of an export as one shell script that writes them into a folder (default: the trainer's name), for a
 * single download from the page: `bash rl-lab-verl-export.sh [dir]`. Quoted here-documents (a file not ending in a
 * newline: printf of a single-quoted word), so nothing in the files is expanded and each is written back exactly.
 */
export function bundleScript(e: Export): string {
  const eof = bundleDelimiter(e.files);
  const lines = [
    '#!/usr/bin/env sh',
    `# Writes an RL Lab experiment exported for ${TARGET_LABELS[e.target]} into a folder: sh ${bundleName(e.target)} [dir]; then see README.md there.`,
    'set -eu',
    `DIR="\${1:-rl-lab-${e.target}}"`,
    'mkdir -p "$DIR/data"',
  ];
  for (const f of e.files) {
    checkWritable(f.path, f.text);
    if (f.text.endsWith('\n')) lines.push(`cat > "$DIR/${f.path}" <<'${eof}'`, f.text.slice(0, -1), eof);
    else lines.push(`printf '%s' ${shellQuote(f.path, f.text)} > "$DIR/${f.path}"`);
  }
  lines.push(`echo "wrote $DIR: ${e.files.map((f) => f.path).join(', ')}; run ${e.entry} there"`, '');
  return lines.join('\n');
}

/** The file name of an export's bundle. */
export function bundleName(target: ExportTarget): string {
  return `rl-lab-${target}-export.sh`;
}
