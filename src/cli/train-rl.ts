// `npm run train -- --task <task> --preset <algorithm> ...`: reinforcement learning with the trainer (src/rl) on
// the machine's WebGPU adapter through Dawn (or the CPU twins with --backend cpu). Starts from the task's shipped
// warm start unless --init says otherwise; every RL config field is a flag (--num_generations 8); --config reads a
// JSON file. Writes metrics.jsonl, rollouts.jsonl, eval.jsonl and rl_config.json (the resolved config: the
// checkpoint and difficulty it started from, so --config rl_config.json reproduces the run) into --out, and the
// checkpoint with the trainer state every save_every steps, at the end and on SIGINT/SIGTERM, atomically as a pair
// (with lora_rank > 0 the checkpoint holds the merged weights, and adapter/ the adapters in PEFT's layout).
// --resume continues a saved run (a larger --steps extends it). The folder is kept from being lost or mixed
// (src/cli/run-folder.ts): one holding another run is refused unless --resume or --overwrite, nothing is written
// there before the run's checks pass, a lock keeps a second writer out, and the saves carry the run's id and a hash.

import { appendFileSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GpuContext } from '../gpu';
import { encodeCheckpoint } from '../io/checkpoint';
import { parameterCount } from '../schema/model-config';
import { tokenizerFromFiles } from '../io/hf-folder';
import { describePlan, MemoryPlanError } from '../model/memory-plan';
import { formatBytes } from '../core/format';
import {
  FIELD_SECTIONS,
  FIELD_SPECS,
  SECTIONS,
  PRESET_NAMES,
  RL_FIELDS,
  SETTINGS,
  configToJson,
  configWarnings,
  decodeFieldText,
  isPresetName,
  derive,
  kindText,
  resolveConfig,
  validateConfig,
  suggestion,
  type FieldSpec,
  type PresetName,
  type RLConfig,
  type RLField,
  type Section,
} from '../schema/config';
import { evalsOf, type EvalRecord, type GroupRecord, type StepRecord } from '../schema/stream';
import type { MetricName } from '../schema/metrics';
import { clipText, isFieldName } from '../schema/fields';
import { rlResolvedMemoryPlan } from '../rl/observation/memory';
import { decodeTrainerState, type TrainerState } from '../rl/algorithm/trainer-state';
import {
  EXIT,
  UsageError,
  flagValueText,
  progressBar,
  settingFlag,
  skipUnknownValue,
  unknownFlagMessage,
  type FlagSpec,
} from './args';
import {
  PUBLIC_DIR,
  TRAINER_STATE_FILE,
  loadCheckpointDir,
  mkdirOrFail,
  onFile,
  CLI_ASSETS,
  readFileOrFail,
  writeFileAtomic,
  writeFilesAtomic,
} from './files';
import { AUTOTUNE_FLAG, acquireTunedDevice } from './tuned-device';
import { speedrunLineOfFolder } from './speedrun-line';
import { nodeRewardSandbox } from './reward-sandbox';
import { PEFT_CONFIG_FILE, PEFT_WEIGHTS_FILE } from '../io/peft';
import { loraShapes } from '../core/lora-layout';
import {
  LORA_ADAPTER_DIR,
  RESUMABLE_FIELDS,
  RunDivergedError,
  RunSession,
  policyFiles,
  type RunSink,
  type SavedRun,
  type SessionStart,
} from '../engine/run-session';
import { CHAR_TOKENIZER_PATH, type AssetLoader } from '../engine/start-policy';
import { hubOptionsFromEnv, runHubAssets } from './hub-cache';
import { groupSeeds, newSeedGroupId, seedCountError } from '../schema/seed-group';
import { SeedGroupRun, runSeedGroup } from '../engine/seed-group-run';
import { bootstrapBand } from '../store/seed-bands';
import {
  type FolderMode,
  type RunLock,
  checkRunFolder,
  claimRunFolder,
  clearRunFiles,
  newFolderRunId,
  readSeal,
  readSealOf,
  sealSafetensors,
} from './run-folder';

/** Flags of the RL command that are not config fields (every config field is a flag too: --<field>). */
const COMMAND_FLAGS: Record<string, FlagSpec> = {
  preset: { type: 'string', value: 'name', doc: `algorithm preset: ${PRESET_NAMES.join(', ')} (default grpo)` },
  config: {
    type: 'string',
    value: 'file.json',
    doc: 'config file: an object of fields, optionally with "preset"; flags override it',
  },
  init: {
    type: 'string',
    value: 'dir',
    doc: "checkpoint directory to start from (default: the task's shipped warm start, else a fresh `model`)",
  },
  resume: {
    type: 'string',
    value: 'file',
    doc: 'trainer_state.safetensors of an earlier run: continue it exactly with its saved config. May change on resume: --steps (more steps extend the run), --save_every, --out, --backend, --inspect-groups, --quiet, --autotune, --memory-budget, --hf_endpoint; any other flag is refused',
  },
  out: {
    type: 'string',
    value: 'dir',
    doc: 'output directory (default runs/<task>-<preset>-<time>; on --resume, the directory of the state file). A folder that holds another run is refused unless --resume continues that run or --overwrite is given; a lock file (.rl-lab.lock) keeps a second writer out',
  },
  overwrite: {
    type: 'boolean',
    doc: "let --out hold another run: once the new run's checks pass (config, prompts, tokenizer, reward_fn, the model), that run's files there are removed (only those) and the new run is written",
  },
  backend: {
    type: 'string',
    value: 'webgpu|cpu',
    doc: 'webgpu (default, Dawn) or cpu (the CPU twins: slow, smallest models only)',
  },
  seeds: {
    type: 'string',
    value: 'n',
    doc: "a seed group: the config over n seeds (its seed, seed + 1, ...), one run after the other, each in --out/seed-<s>/; a seed that fails is named and the others go on; ends with each seed's last reward and held-out accuracy and their median with a 95% bootstrap band",
  },
  'inspect-groups': {
    type: 'string',
    value: 'n',
    doc: 'groups per step written to rollouts.jsonl with per-token records (default 2)',
  },
  quiet: { type: 'boolean', doc: 'no progress bar' },
  autotune: AUTOTUNE_FLAG,
  'memory-budget': {
    type: 'string',
    value: 'GiB',
    doc: "GPU memory the run may use: the memory plan (printed at the start) refuses a run that needs more, naming the knobs to lower (default: only the device's per-buffer limits are checked)",
  },
  hf_endpoint: settingFlag(SETTINGS.hf_endpoint),
  help: { type: 'boolean', doc: 'show this help' },
};

function fieldHelp(name: string, spec: FieldSpec): string {
  const def =
    spec.default === null
      ? 'null'
      : typeof spec.default === 'object'
        ? JSON.stringify(spec.default)
        : String(spec.default);
  const others = [
    spec.trl && `TRL ${spec.trl}`,
    spec.verl && `verl ${spec.verl}`,
    spec.openrlhf && `OpenRLHF ${spec.openrlhf}`,
  ]
    .filter(Boolean)
    .join('; ');
  const kind = spec.kind === 'string' && spec.multiline ? 'a file: its text is the value' : kindText(spec);
  return (
    `  --${name}`.padEnd(34) +
    `${spec.doc}\n${' '.repeat(34)}${kind}; default ${def}${others ? `\n${' '.repeat(34)}elsewhere: ${others}${spec.note ? ` (${spec.note})` : ''}` : ''}`
  );
}

export function rlHelpText(): string {
  const cmd = Object.entries(COMMAND_FLAGS).map(([k, f]) => `  --${k}${flagValueText(f)}`.padEnd(34) + f.doc);
  const fields = (Object.entries(FIELD_SECTIONS) as [Section, readonly RLField[]][]).flatMap(([section, names]) => [
    '',
    `${SECTIONS[section].title} (${SECTIONS[section].math}):`,
    ...names.map((k) => fieldHelp(k, FIELD_SPECS[k])),
  ]);
  return [
    'usage: npm run train -- --task <task> --preset <algorithm> [--steps N] [--seed S] [--config file.json] [--out dir] [--<field> value ...]',
    '       npm run train -- --sft --task <task> ...   (supervised warm start; --sft --help lists its flags)',
    '',
    'command flags:',
    ...cmd,
    '',
    'config fields (their math: docs/algorithms.md; every metric: docs/metrics.md), each also a flag; a preset sets some, flags override:',
    ...fields,
    '',
    'saving: the checkpoint and trainer_state.safetensors are written to --out every save_every steps, at the end, and on',
    'SIGINT/SIGTERM (the current step finishes first; a second signal exits at once, keeping the last saved pair).',
    `with lora_rank > 0 the checkpoint holds the merged weights W + s B A, and ${LORA_ADAPTER_DIR}/ the adapters in PEFT's layout (${PEFT_WEIGHTS_FILE}, ${PEFT_CONFIG_FILE}).`,
    `exit codes: ${EXIT.ok} done, ${EXIT.usage} refused input (flags, config, files), ${EXIT.failed} failed while running, ${EXIT.interrupted} interrupted (state saved).`,
    '',
  ].join('\n');
}

interface ParsedRlArgs {
  command: Record<string, string | boolean>;
  fields: Partial<Record<RLField, unknown>>;
}

/** Splits argv into command flags and config fields (decoded by the config's own text rules). */
export function parseRlArgs(argv: readonly string[]): ParsedRlArgs {
  const command: Record<string, string | boolean> = {};
  const fields: Partial<Record<RLField, unknown>> = {};
  const errors: string[] = [];
  const known = { ...COMMAND_FLAGS, ...FIELD_SPECS };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--'))
      throw new UsageError(`unexpected argument "${clipText(arg)}" (flags start with --; see --help)`);
    const [raw, inline] = arg.slice(2).split(/=(.*)/s, 2);
    const name = isFieldName(RL_FIELDS, raw)
      ? raw
      : isFieldName(RL_FIELDS, raw.replace(/-/g, '_'))
        ? raw.replace(/-/g, '_')
        : raw;
    if (isFieldName(COMMAND_FLAGS, name)) {
      if (COMMAND_FLAGS[name].type === 'boolean') command[name] = inline === undefined ? true : inline !== 'false';
      else {
        const v = inline ?? argv[++i];
        if (v === undefined) throw new UsageError(`--${name} needs a value${flagValueText(COMMAND_FLAGS[name])}`);
        command[name] = v;
      }
      continue;
    }
    if (!isFieldName(RL_FIELDS, name)) {
      errors.push(unknownFlagMessage(raw, known));
      i = skipUnknownValue(argv, i, inline);
      continue;
    }
    const spec = FIELD_SPECS[name as RLField];
    let text = inline;
    if (text === undefined) {
      const next = argv[i + 1];
      if (spec.kind === 'boolean' && (next === undefined || next.startsWith('--'))) text = 'true';
      else if (next === undefined) throw new UsageError(`--${name} needs a value (${spec.doc})`);
      else text = argv[++i];
    }
    // A text of several lines (reward_fn's source) is given as a file, whose text goes into the config, so the run's
    // rl_config.json holds it and reproduces the run without the file.
    if (spec.kind === 'string' && spec.multiline && text.trim() !== '' && text.trim() !== 'null') {
      try {
        text = readFileOrFail(text).toString('utf8');
      } catch (e) {
        errors.push(`--${name} names a file whose text is the value: ${(e as Error).message}`);
        continue;
      }
    }
    const v = decodeFieldText(name, spec, text);
    if (v && typeof v === 'object' && 'error' in v) errors.push((v as { error: string }).error);
    else fields[name as RLField] = v;
  }
  if (errors.length) throw new UsageError(errors.join('\n  '));
  return { command, fields };
}

interface WarmStart {
  task: string;
  difficulty: number;
  path: string;
}

const MANIFEST = new URL('checkpoints/manifest.json', PUBLIC_DIR);

function shippedWarmStarts(): WarmStart[] {
  if (!existsSync(MANIFEST)) return [];
  return (JSON.parse(readFileOrFail(MANIFEST).toString('utf8')) as { checkpoints: WarmStart[] }).checkpoints;
}

/**
 * The directory a `checkpoint` value names: a path (absolute, or with a slash, or an existing directory) as
 * given; otherwise a shipped warm start's name under public/checkpoints/.
 */
export function checkpointDirOf(name: string): string {
  if (isAbsolute(name) || /[\\/]/.test(name) || name.startsWith('.') || existsSync(name)) return name;
  return fileURLToPath(new URL(`checkpoints/${name}`, PUBLIC_DIR));
}

/** The config from --config, --preset and field flags, validated (RLConfigError names every bad field). */
export function configFromArgs(parsed: ParsedRlArgs): { config: RLConfig; preset: PresetName; given: Set<string> } {
  let fileFields: Record<string, unknown> = {};
  let filePreset: string | null = null;
  if (typeof parsed.command.config === 'string') {
    const text = readFileOrFail(parsed.command.config).toString('utf8');
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`--config ${parsed.command.config}: not valid JSON (${(e as Error).message})`);
    }
    if (!obj || typeof obj !== 'object' || Array.isArray(obj))
      throw new UsageError(`--config ${parsed.command.config}: the top level must be an object of fields`);
    // run_id: the run's own id, which rl_config.json records beside its config; a new run gets a new one.
    const { preset, run_id: _runId, ...rest } = obj as Record<string, unknown>;
    if (preset !== undefined && typeof preset !== 'string')
      throw new UsageError(`--config: "preset" must be a preset name`);
    filePreset = (preset as string | undefined) ?? null;
    fileFields = rest;
  }
  const presetName = (parsed.command.preset as string | undefined) ?? filePreset ?? 'grpo';
  if (!isPresetName(presetName))
    throw new UsageError(
      `--preset must be one of ${PRESET_NAMES.join(', ')}; got "${presetName}"${suggestion(presetName, PRESET_NAMES)}`,
    );
  const fields = { ...fileFields, ...parsed.fields };
  return { config: resolveConfig(presetName, fields), preset: presetName, given: new Set(Object.keys(fields)) };
}

/** Where a new run starts: its config with the checkpoint and difficulty resolved, and the directory to load (null: a fresh model). */
export interface RunStart {
  config: RLConfig;
  preset: PresetName;
  /** The checkpoint directory the weights come from; null for a fresh `model` preset from `seed`. */
  dir: string | null;
}

/**
 * Resolves a new run's start. The config records what was chosen, so the run's rl_config.json fed back through
 * --config gives the same config and the same start: `checkpoint` is the shipped warm start's name (chosen by
 * task when neither --init nor checkpoint is given) or the --init directory (absolute), and `difficulty` is the
 * warm start's (unless set) or the task's default.
 */
export function resolveRunStart(parsed: ParsedRlArgs): RunStart {
  const initDir = typeof parsed.command.init === 'string' ? parsed.command.init : null;
  if (initDir !== null && parsed.fields.checkpoint != null)
    throw new UsageError('--init and --checkpoint both name the starting weights; give one');
  const first = configFromArgs(parsed);
  let overrides: Partial<Record<RLField, unknown>> = {};
  if (initDir !== null) overrides = { checkpoint: resolve(initDir) };
  else if (!first.given.has('checkpoint')) {
    // No checkpoint named: the task's warm start, whose difficulty it was trained at holds unless the user sets one.
    // `--checkpoint null` (or null in --config, as a fresh run's rl_config.json records it) is a fresh model, as in the page.
    const warm = shippedWarmStarts().find((w) => w.task === first.config.task);
    if (warm)
      overrides = {
        checkpoint: warm.path.replace(/^checkpoints\//, ''),
        ...(first.config.difficulty === null ? { difficulty: warm.difficulty } : {}),
      };
  }
  const withStart = Object.keys(overrides).length
    ? configFromArgs({ command: parsed.command, fields: { ...parsed.fields, ...overrides } })
    : first;
  const config =
    withStart.config.difficulty === null
      ? { ...withStart.config, difficulty: derive(withStart.config).difficulty }
      : withStart.config;
  return {
    config: validateConfig(config),
    preset: withStart.preset,
    dir: config.checkpoint === null ? null : checkpointDirOf(config.checkpoint),
  };
}

/** Command flags and config fields that may differ from the saved run on --resume; every other flag is refused. */
const RESUME_COMMAND_FLAGS = new Set([
  'resume',
  'out',
  'quiet',
  'backend',
  'autotune',
  'inspect-groups',
  'memory-budget',
  'overwrite',
  'hf_endpoint',
  'help',
]);
const RESUME_FIELDS = new Set<RLField>(RESUMABLE_FIELDS);

/**
 * The config to continue a saved run with: the saved one, with --steps (at least the steps done; more extend the
 * run) and --save_every applied. A field flag equal to the saved value is accepted; any other change is refused
 * with a message naming the flags.
 */
export function resumeConfig(parsed: ParsedRlArgs, state: TrainerState, statePath: string): RLConfig {
  const saved = state.meta.config;
  const refused = [
    ...Object.keys(parsed.command).filter((k) => !RESUME_COMMAND_FLAGS.has(k)),
    ...(Object.entries(parsed.fields) as [RLField, unknown][])
      .filter(([k, v]) => !RESUME_FIELDS.has(k) && JSON.stringify(v) !== JSON.stringify(saved[k]))
      .map(([k]) => k),
  ];
  if (refused.length) {
    const may = [
      ...[...RESUME_FIELDS].map((f) => `--${f}`),
      ...[...RESUME_COMMAND_FLAGS].filter((f) => f !== 'resume' && f !== 'help').map((f) => `--${f}`),
    ];
    throw new UsageError(
      `--resume continues the saved run with its saved config; these flags cannot change on resume: ${refused.map((k) => `--${k}`).join(', ')} (may change: ${may.join(', ')})`,
    );
  }
  const done = state.meta.step;
  const steps = (parsed.fields.steps as number | undefined) ?? saved.steps;
  if (steps < done)
    throw new UsageError(`--steps ${steps} is fewer than the ${done} steps ${statePath} has done already`);
  if (steps === done) {
    throw new UsageError(
      `${statePath}: the run is finished (${done} of ${saved.steps} steps done); resume with --steps N (N > ${done}) to extend it`,
    );
  }
  return validateConfig({
    ...saved,
    steps,
    save_every: (parsed.fields.save_every as number | undefined) ?? saved.save_every,
  });
}

/** Drops the lines of a .jsonl log whose step is after `lastStep` (logged after the last save, so not in the state). */
function trimLogAfter(path: string, lastStep: number): number {
  if (!existsSync(path)) return 0;
  const lines = readFileOrFail(path).toString('utf8').split('\n').filter(Boolean);
  const kept = lines.filter((line) => {
    try {
      return ((JSON.parse(line) as { step?: number }).step ?? 0) <= lastStep;
    } catch {
      return true;
    }
  });
  if (kept.length !== lines.length) writeFileAtomic(path, kept.map((l) => `${l}\n`).join(''));
  return lines.length - kept.length;
}

function jsonlGroups(step: number, groups: GroupRecord[]): string {
  const arr = (x: ArrayLike<number>) => Array.from(x, (v) => (Number.isInteger(v) ? v : Number(v.toPrecision(7))));
  return groups
    .map((g) =>
      JSON.stringify({
        step,
        group: g.index,
        prompt: g.prompt,
        answer: g.answer,
        completions: g.completions.map((c) => ({
          text: c.text,
          reward: c.reward,
          rewards: c.rewards,
          reason: c.reason,
          finished: c.finished,
          masked: c.masked,
          tokens: Object.fromEntries(Object.entries(c.tokens).map(([k, v]) => [k, arr(v as ArrayLike<number>)])),
        })),
      }),
    )
    .join('\n');
}

/**
 * Reads a trainer state file, its problems named with the file's path: its contents checked against the SHA-256 its
 * header carries (a changed byte is refused), and the run it belongs to (null for a state saved without one).
 */
export function readTrainerStateFile(path: string): { bytes: Uint8Array; state: TrainerState; runId: string | null } {
  const bytes = new Uint8Array(readFileOrFail(path));
  const { runId } = readSeal(bytes, path);
  try {
    return { bytes, state: decodeTrainerState(bytes), runId };
  } catch (e) {
    (e as Error).message = `${path}: ${(e as Error).message}`;
    throw e;
  }
}

/**
 * A warning when the checkpoint beside a trainer state is from another step: a save was cut off between the two
 * renames (the state is renamed last, so it is the older one). The state holds the policy too, so the run
 * continues from it and the next save rewrites the checkpoint.
 */
async function pairMismatch(dir: string, step: number, runId: string | null): Promise<string | null> {
  const model = join(dir, 'model.safetensors');
  if (!existsSync(model))
    return `${dir} has no model.safetensors beside the trainer state (step ${step}); the next save writes the checkpoint`;
  // A checkpoint of another run, or one whose bytes changed, is refused: the pair would be two runs' halves.
  const ckRun = readSealOf(model)?.runId ?? null;
  if (ckRun !== null && runId !== null && ckRun !== runId)
    throw new UsageError(
      `${model} belongs to another run (run ${ckRun}) than ${join(dir, TRAINER_STATE_FILE)} (run ${runId}): a checkpoint and trainer state from two runs cannot be resumed together`,
    );
  let ckStep: string | undefined;
  try {
    ckStep = (await loadCheckpointDir(dir)).ck.metadata?.steps;
  } catch (e) {
    return `the checkpoint beside the trainer state cannot be used (${(e as Error).message}); resuming from the trainer state (step ${step}), the next save rewrites the checkpoint`;
  }
  if (ckStep === String(step)) return null;
  return `${model} is from step ${ckStep ?? '?'} but ${TRAINER_STATE_FILE} from step ${step} (a save was cut off between them); resuming from the trainer state, the next save rewrites the checkpoint`;
}

/**
 * The resume point a trainer state file continues from: the state itself, its policy as the checkpoint (the state is
 * what the run continues from, whatever the checkpoint beside it holds) and the tokenizer files saved beside it.
 */
async function savedRunOf(statePath: string, bytes: Uint8Array, state: TrainerState): Promise<SavedRun> {
  const dir = dirname(statePath);
  const tokenizerPath = join(dir, 'tokenizer.json');
  const tokenizerJson = existsSync(tokenizerPath)
    ? readFileOrFail(tokenizerPath).toString('utf8')
    : await CLI_ASSETS.text(CHAR_TOKENIZER_PATH);
  const configPath = join(dir, 'tokenizer_config.json');
  const tokenizerConfigJson = existsSync(configPath) ? readFileOrFail(configPath).toString('utf8') : null;
  const tok = await tokenizerFromFiles(tokenizerJson, tokenizerConfigJson);
  const ck = {
    config: state.meta.modelConfig,
    params: state.learner.policy,
    metadata: {},
    special: {
      bosId: tok.bosId,
      eosId: tok.eosId,
      padId: tok.padId,
      ...(tok.eosIds ? { eosIds: [...tok.eosIds] } : {}),
    },
  };
  return { step: state.meta.step, state: bytes, ...encodeCheckpoint(ck), tokenizerJson, tokenizerConfigJson };
}

/**
 * --out as a run's sink: metrics.jsonl (one line per optimizer step), rollouts.jsonl and eval.jsonl appended per
 * rollout step; the checkpoint, its adapters under LoRA and the trainer state written together, the state renamed
 * last (both record their step, so a save cut off between the renames is named on resume); a rewind drops the log
 * lines after the saved step.
 */
function folderSink(
  out: string,
  paths: { metrics: string; rollouts: string; eval: string },
  lora: boolean,
  savedText: () => string,
  runId: string,
): RunSink & { savedIn: string } {
  const append = (path: string, text: string) => onFile(path, 'append to it', () => appendFileSync(path, text));
  const sink = {
    savedIn: out,
    appendStep: async (records: StepRecord[]) => {
      for (const r of records) {
        append(
          paths.metrics,
          `${JSON.stringify({ step: r.step, optimizer_step: r.optimizerStep, update: r.update, updates: r.updates, epoch: r.epoch, minibatch: r.minibatch, ...r.metrics })}\n`,
        );
        if (r.groups?.length) append(paths.rollouts, `${jsonlGroups(r.step, r.groups)}\n`);
        // The step-0 evaluation (before training) comes first, so eval.jsonl reads in step order.
        for (const e of evalsOf(r)) append(paths.eval, `${JSON.stringify(e)}\n`);
      }
    },
    save: async (saved: SavedRun) => {
      const policy = policyFiles(saved, lora ? saved.state : null);
      try {
        if (lora) mkdirOrFail(join(out, LORA_ADAPTER_DIR));
        // The checkpoint and the state carry the run's id and a SHA-256 of their contents, which --resume checks.
        writeFilesAtomic([
          ...policy.files.map(
            (f) =>
              [
                join(out, f.name),
                f.name === 'model.safetensors' && typeof f.data !== 'string' ? sealSafetensors(f.data, runId) : f.data,
              ] as [string, Uint8Array | string],
          ),
          [join(out, TRAINER_STATE_FILE), sealSafetensors(saved.state, runId)],
        ]);
      } catch (e) {
        (e as Error).message = `saving step ${saved.step}: ${(e as Error).message}; ${savedText()}`;
        throw e;
      }
      sink.savedIn = out;
      return true;
    },
    lastSaved: async () => {
      const statePath = join(sink.savedIn, TRAINER_STATE_FILE);
      if (!existsSync(statePath)) return null;
      const { bytes, state } = readTrainerStateFile(statePath);
      return savedRunOf(statePath, bytes, state);
    },
    truncate: async (step: number) => {
      for (const p of Object.values(paths)) trimLogAfter(p, step);
    },
  };
  return sink;
}

export async function trainRl(argv: string[]): Promise<number> {
  const parsed = parseRlArgs(argv);
  if (parsed.command.help) {
    process.stdout.write(rlHelpText());
    return EXIT.ok;
  }
  if (
    parsed.fields.task === undefined &&
    typeof parsed.command.config !== 'string' &&
    typeof parsed.command.resume !== 'string'
  ) {
    throw new UsageError('--task is required (see --help)');
  }
  const backendName = (parsed.command.backend as string | undefined) ?? 'webgpu';
  if (backendName !== 'webgpu' && backendName !== 'cpu')
    throw new UsageError(`--backend must be webgpu or cpu, got "${backendName}"`);
  const inspectGroups = parsed.command['inspect-groups'] !== undefined ? Number(parsed.command['inspect-groups']) : 2;
  if (!Number.isInteger(inspectGroups) || inspectGroups < 0)
    throw new UsageError(`--inspect-groups must be a whole number >= 0`);
  const budgetGiB = parsed.command['memory-budget'] !== undefined ? Number(parsed.command['memory-budget']) : null;
  if (budgetGiB !== null && !(budgetGiB > 0))
    throw new UsageError(`--memory-budget must be a number of GiB > 0, got "${parsed.command['memory-budget']}"`);
  const memoryBudgetBytes = budgetGiB === null ? null : budgetGiB * 2 ** 30;
  const statePath = typeof parsed.command.resume === 'string' ? parsed.command.resume : null;
  const seeds = parsed.command.seeds !== undefined ? Number(parsed.command.seeds) : null;
  if (seeds !== null) {
    const refused = seedCountError(seeds);
    if (refused) throw new UsageError(`--seeds: ${refused}`);
    if (statePath !== null)
      throw new UsageError(
        "--seeds starts a seed group; resume each seed's run with --resume <out>/seed-<s>/trainer_state.safetensors",
      );
  }
  let from: SavedRun | null = null;
  let runId: string | null = null;
  let config: RLConfig;
  let preset: PresetName | null = null;
  if (statePath !== null) {
    const { bytes, state, runId: savedRunId } = readTrainerStateFile(statePath);
    runId = savedRunId;
    const savedSteps = state.meta.config.steps;
    config = resumeConfig(parsed, state, statePath);
    if (config.steps > savedSteps) {
      const stretched = [
        config.lr_schedule !== 'constant' && `lr_schedule ${config.lr_schedule}`,
        config.curriculum === 'easy_to_hard' && 'the easy_to_hard curriculum',
      ].filter(Boolean);
      console.error(
        `extending the run from ${savedSteps} to ${config.steps} steps${stretched.length ? ` (${stretched.join(' and ')} now stretch to ${config.steps} steps)` : ''}`,
      );
    }
    const mismatch = await pairMismatch(dirname(statePath), state.meta.step, runId);
    if (mismatch) console.error(`warning: ${mismatch}`);
    from = await savedRunOf(statePath, bytes, state);
  } else {
    ({ config, preset } = resolveRunStart(parsed));
  }
  for (const w of configWarnings(config)) console.error(`warning: ${w}`);
  const out =
    (parsed.command.out as string | undefined) ??
    (statePath !== null ? dirname(statePath) : join('runs', `${config.task}-${preset}-${Date.now()}`));
  // Every folder the command writes to is checked before any work, and again under its lock before the first write.
  const folder: FolderMode = parsed.command.overwrite === true ? 'overwrite' : statePath !== null ? 'resume' : 'new';
  const folders = seeds === null ? [out] : groupSeeds(config.seed, seeds).map((s) => join(out, `seed-${s}`));
  for (const f of folders) checkRunFolder(f, folder, runId);

  // A checkpoint or reward_model named as a hub id: downloaded into the cache (or found there) before anything else.
  const assets = await runHubAssets(config, CLI_ASSETS, {
    ...hubOptionsFromEnv(typeof parsed.command.hf_endpoint === 'string' ? parsed.command.hf_endpoint : null),
    log: (line) => console.error(line),
    plan: (model) => {
      // The memory plan before any weight is fetched; the device's own limits are checked again when it opens.
      const { plan } = rlResolvedMemoryPlan(config, model, {
        maxBufferSize: Number.POSITIVE_INFINITY,
        maxStorageBufferBindingSize: Number.POSITIVE_INFINITY,
        budgetBytes: memoryBudgetBytes,
      });
      const lines = describePlan(plan).map((l) =>
        l.replace(/per-buffer limit Infinity GiB$/, "the device's per-buffer limit is checked when it opens"),
      );
      console.error(`memory plan (before the download):\n  ${lines.join('\n  ')}`);
      if (plan.problems.length) throw new MemoryPlanError(plan);
    },
    progress:
      parsed.command.quiet || !process.stderr.isTTY
        ? undefined
        : (file, bytes, total) =>
            process.stderr.write(
              `\r${progressBar(total ? bytes / total : 0, `${file} ${formatBytes(bytes)}${total ? ` of ${formatBytes(total)}` : ''}`)}${total !== null && bytes >= total ? '\n' : ''}`,
            ),
  });

  let ctx: GpuContext | null = null;
  const driver: Driver = {
    assets,
    backend: backendName,
    inspectGroups,
    memoryBudgetBytes,
    quiet: Boolean(parsed.command.quiet),
    device: async () => (ctx ??= await acquireTunedDevice({ tune: parsed.command.autotune !== false })),
    signal: null,
    savedText: () => 'nothing was saved',
  };
  const onSignal = (sig: NodeJS.Signals) => {
    if (driver.signal) {
      console.error(`\n${sig} again: exiting without finishing the step; ${driver.savedText()}`);
      process.exit(EXIT.interrupted);
    }
    driver.signal = sig;
    console.error(`\n${sig}: stopping after the step in progress, then saving (send it again to exit at once)`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    if (seeds === null) {
      const run = await trainOne({ config, preset, from, statePath, out, runId, folder }, driver);
      console.log(out);
      return run.code;
    }
    return await trainSeedGroup({ config, preset, out, seeds, folder }, driver);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    (ctx as GpuContext | null)?.destroy();
  }
}

/** What every run of one `npm run train` shares: the backend and its device, the flags, a signal received. */
interface Driver {
  /** Where the run's files are read: the file system, with hub ids mapped to their snapshots in the cache. */
  assets: AssetLoader;
  backend: 'webgpu' | 'cpu';
  inspectGroups: number;
  memoryBudgetBytes: number | null;
  quiet: boolean;
  device(): Promise<GpuContext>;
  /** SIGINT or SIGTERM received: the run in progress stops after its step and saves; no further seed starts. */
  signal: NodeJS.Signals | null;
  /** What the run in progress has saved, in words (for a second signal). */
  savedText(): string;
}

/** How one run ended: done or interrupted (EXIT), with its last step's metrics and its last held-out evaluation. */
interface RunEnd {
  code: number;
  last: Record<string, number>;
  lastEval: EvalRecord | null;
}

/**
 * One run into `out`: a RunSession opened first (every check of the run: config, prompts, tokenizer, reward_fn, the
 * model, the prompts' fit in its context), and only then the folder claimed (its lock, the sweep of a killed save's
 * temporaries, an --overwrite'n run's files removed) and its logs and rl_config.json written; trained to its last step
 * or a signal, and saved. A divergence throws with the session's message and where the last good pair is.
 */
async function trainOne(
  plan: {
    config: RLConfig;
    preset: PresetName | null;
    from: SavedRun | null;
    statePath: string | null;
    out: string;
    /** The resumed run's id (null: a new run, or a state saved without one; a new id is made). */
    runId: string | null;
    folder: FolderMode;
  },
  driver: Driver,
): Promise<RunEnd> {
  const { config, preset, from, statePath, out } = plan;
  const runId = plan.runId ?? newFolderRunId();
  const paths = {
    metrics: join(out, 'metrics.jsonl'),
    rollouts: join(out, 'rollouts.jsonl'),
    eval: join(out, 'eval.jsonl'),
  };

  let savedStep = from ? from.step : -1;
  const savedText = () =>
    savedStep >= 0
      ? `the last saved checkpoint and trainer state in ${sink.savedIn} are from step ${savedStep}`
      : 'nothing was saved';
  driver.savedText = savedText;
  const sink = folderSink(out, paths, config.lora_rank > 0, savedText, runId);
  if (statePath !== null) sink.savedIn = dirname(statePath);
  const onStart = ({ modelConfig, backend, teacher, teachers }: SessionStart) => {
    if (teacher) console.error(`teacher: ${teacher.source}`);
    for (const t of teachers ?? []) console.error(`teachers: ${t.source}`);
    if (backend.kind !== 'webgpu') return;
    const { maxBufferSize, maxStorageBufferBindingSize } = backend.ctx.device.limits;
    const { plan: memory } = rlResolvedMemoryPlan(
      config,
      modelConfig,
      { maxBufferSize, maxStorageBufferBindingSize, budgetBytes: driver.memoryBudgetBytes },
      // Each distinct teacher once: ids sharing a folder share its weights (one model config object).
      [...new Set([...(teacher ? [teacher.modelConfig] : []), ...(teachers ?? []).map((t) => t.modelConfig)])],
    );
    console.error(`memory plan:\n  ${describePlan(memory).join('\n  ')}`);
  };
  const session = await RunSession.open(
    {
      config,
      backend: driver.backend,
      divergence: 'stop',
      inspectGroups: driver.inspectGroups,
      memoryBudgetBytes: driver.memoryBudgetBytes,
      onStart,
    },
    { assets: driver.assets, sink, device: () => driver.device(), rewardSandbox: nodeRewardSandbox },
    from,
  );
  let lock: RunLock;
  try {
    await assertRewardFnCompiles(session);
    lock = claimRunFolder(out, plan.folder, runId, (text) => console.error(`notice: ${text}`));
  } catch (e) {
    session.destroy();
    throw e;
  }
  try {
    const resumedHere = statePath !== null && resolve(dirname(statePath)) === resolve(out);
    if (plan.folder === 'overwrite' && !resumedHere) {
      const removed = clearRunFiles(out);
      if (removed.length) console.error(`--overwrite: removed the earlier run's ${removed.join(', ')} from ${out}`);
    }
    if (from) {
      // Steps logged after the last save are not in the state; they run again, so their old lines go.
      const dropped = Object.values(paths).reduce((n, p) => n + trimLogAfter(p, from.step), 0);
      if (dropped)
        console.error(
          `dropped ${dropped} log line(s) after step ${from.step} (logged after the last save; those steps run again)`,
        );
    } else for (const p of Object.values(paths)) writeFileAtomic(p, '');
    // The session's config: sampling_defaults 'model' has filled the sampling knobs from generation_config.json.
    writeFileAtomic(join(out, 'rl_config.json'), `${runConfigJson(session.config, preset, runId)}\n`);
    return await trainOpened(session, plan, driver, sink, () => {
      savedStep = session.savedStep;
    });
  } finally {
    session.destroy();
    lock.release();
  }
}

/**
 * The config's reward_fn, compiled in its sandbox (an empty batch through it) before the run's folder is touched: one
 * that does not compile is refused input. One that fails on real completions fails at its first step.
 */
async function assertRewardFnCompiles(session: RunSession): Promise<void> {
  const reward = session.setting.userReward;
  if (!reward) return;
  try {
    await reward.score([]);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** rl_config.json: the run's config (fed back through --config it reproduces the run) and the run's id. */
function runConfigJson(config: RLConfig, preset: PresetName | null, runId: string): string {
  return JSON.stringify({ ...(JSON.parse(configToJson(config, preset)) as object), run_id: runId }, null, 2);
}

/** The training of an opened session whose folder is claimed: to its last step or a signal, then saved. */
async function trainOpened(
  session: RunSession,
  plan: { config: RLConfig; preset: PresetName | null; from: SavedRun | null; statePath: string | null; out: string },
  driver: Driver,
  sink: RunSink & { savedIn: string },
  onSaved: () => void,
): Promise<RunEnd> {
  const { config, preset, from, statePath, out } = plan;
  const { derived, lora, learnedReward } = session.setting;
  const startStep = session.step;
  if (learnedReward) console.error(`reward_model: ${learnedReward.source}`);
  const modelConfig = session.start!.modelConfig;
  const source = from ? `${statePath} at step ${from.step}` : session.start!.source;
  console.error(
    `${config.task} (difficulty ${derived.difficulty}), ${preset ?? 'resumed'}, seed ${config.seed}, ${parameterCount(modelConfig).toLocaleString('en-US')} parameters from ${source}; ` +
      `steps ${startStep + 1}..${config.steps} of ${derived.sequencesPerStep} completions, ${derived.optimizerStepsPerBatch} optimizer step(s) each; out ${out}`,
  );
  if (lora) {
    const trainable = loraShapes(modelConfig, lora).reduce((n, s) => n + s.shape[0] * s.shape[1], 0);
    console.error(
      `LoRA rank ${lora.rank}, alpha ${lora.alpha} on ${lora.targets.join(', ')}: ${trainable.toLocaleString('en-US')} trainable parameters, the base frozen`,
    );
  }

  const t0 = performance.now();
  let last: Record<string, number> = {};
  let lastEval: EvalRecord | null = null;
  const quiet = driver.quiet;
  try {
    await session.trainToEnd({
      shouldStop: () => driver.signal !== null,
      onStep: ({ records, alerts, saved }) => {
        if (saved) onSaved();
        for (const a of alerts) process.stderr.write(`${quiet ? '' : '\n'}warning: ${a.message}\n`);
        const r = records[records.length - 1];
        last = r.metrics;
        const evaluation = records.find((x) => x.eval)?.eval;
        if (evaluation) lastEval = evaluation;
        if (quiet) return;
        const done = r.step - startStep;
        const eta = ((performance.now() - t0) / 1000 / done) * (config.steps - r.step);
        const ev = evaluation
          ? ` eval acc ${(evaluation.accuracy * 100).toFixed(0)}% pass@${evaluation.passAtK.length} ${(evaluation.passAtK[evaluation.passAtK.length - 1] * 100).toFixed(0)}%`
          : '';
        const m = (name: MetricName, digits: number, scale = 1) => ((r.metrics[name] ?? NaN) * scale).toFixed(digits);
        process.stderr.write(
          `\r${progressBar(r.step / config.steps, `step ${r.step}/${config.steps} reward ${m('reward', 3)} acc ${m('accuracy', 0, 100)}% entropy ${m('entropy', 3)} clip ${m('clip_ratio/region_mean', 3)}${ev} eta ${eta.toFixed(0)}s`)}   `,
        );
      },
    });
    onSaved();
    if (!quiet) process.stderr.write('\n');
  } catch (e) {
    if (e instanceof RunDivergedError) {
      if (!quiet) process.stderr.write('\n');
      throw new Error(
        `${e.message} (${e.savedStep > 0 ? `the checkpoint and trainer state in ${sink.savedIn} are from step ${e.savedStep}; the logs end there` : 'nothing was saved; the logs are empty'})`,
      );
    }
    throw e;
  }
  const took = `${session.savedStep - startStep} steps in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
  if (driver.signal) {
    console.error(
      `interrupted by ${driver.signal} after step ${session.savedStep} of ${config.steps} (${took}); saved the checkpoint and trainer state to ${out}; continue with: npm run train -- --resume ${join(out, TRAINER_STATE_FILE)}`,
    );
    return { code: EXIT.interrupted, last, lastEval };
  }
  console.error(
    `done: ${took}; last reward ${last.reward?.toFixed(3)}, accuracy ${((last.accuracy ?? 0) * 100).toFixed(1)}%; saved to ${out}`,
  );
  console.error(speedrunLineOfFolder(out, config.speedrun_target));
  return { code: EXIT.ok, last, lastEval };
}

/**
 * A seed group: the config at its seed, seed + 1, ... (src/schema/seed-group.ts, as the page's "Run over seeds"), one
 * run after the other on one device, each in `out`/seed-<s>/. A seed that fails is named and the others go on; a
 * signal stops the group after the run in progress is saved. Ends with each seed's last reward and held-out accuracy,
 * and their median with its 95% bootstrap band across seeds (src/store/seed-bands.ts, the page's statistic).
 */
async function trainSeedGroup(
  plan: { config: RLConfig; preset: PresetName | null; out: string; seeds: number; folder: FolderMode },
  driver: Driver,
): Promise<number> {
  const group = new SeedGroupRun(newSeedGroupId(Date.now()), plan.config, plan.seeds);
  const seeds = group.seeds;
  const ends = await runSeedGroup<RunEnd>(
    group,
    async (config) => {
      const out = join(plan.out, `seed-${config.seed}`);
      const end = await trainOne(
        { config, preset: plan.preset, from: null, statePath: null, out, runId: null, folder: plan.folder },
        driver,
      );
      return end.code === EXIT.interrupted
        ? { kind: 'stopped', why: `interrupted; resume it with --resume ${join(out, TRAINER_STATE_FILE)}` }
        : { kind: 'trained', result: end };
    },
    {
      stopped: () => (driver.signal ? `not started: ${driver.signal}` : null),
      onStart: (seed) => console.error(`seed ${seed} (${group.index + 1} of ${seeds.length}):`),
      onFailed: (seed, why) => {
        const left = group.left;
        console.error(
          `seed ${seed} failed: ${why}${left > 0 ? ` (the other seed${left > 1 ? 's go' : ' goes'} on)` : ''}`,
        );
      },
    },
  ).then((trained) => trained.map(({ seed, result }) => ({ seed, end: result })));
  const failed = group.failed;
  const fmt = (x: number | undefined, scale = 1, digits = 3) =>
    x === undefined || !Number.isFinite(x) ? '-' : (x * scale).toFixed(digits);
  console.error(`\nseed group: ${ends.length} of ${seeds.length} seeds trained, in ${plan.out}`);
  for (const { seed, end } of ends) {
    console.error(
      `  seed ${seed}: reward ${fmt(end.last.reward)}, accuracy ${fmt(end.last.accuracy, 100, 1)}%${end.lastEval ? `, held-out accuracy ${fmt(end.lastEval.accuracy, 100, 1)}% at step ${end.lastEval.step}` : ''}`,
    );
  }
  const band = (xs: number[], scale: number, digits: number, unit: string) => {
    const b = bootstrapBand(xs, 'median');
    const v = (x: number) => `${fmt(x, scale, digits)}${unit}`;
    return b.seeds < 2 ? v(b.stat) : `${v(b.stat)} (95% band ${v(b.lo)} to ${v(b.hi)})`;
  };
  const rewards = ends.map((x) => x.end.last.reward).filter((x): x is number => Number.isFinite(x));
  if (rewards.length) console.error(`  median last reward over ${rewards.length} seeds: ${band(rewards, 1, 3, '')}`);
  const heldOut = ends.flatMap((x) => (x.end.lastEval ? [x.end.lastEval.accuracy] : []));
  if (heldOut.length)
    console.error(`  median held-out accuracy over ${heldOut.length} seeds: ${band(heldOut, 100, 1, '%')}`);
  const ended = group.endText();
  if (ended) console.error(ended);
  console.log(plan.out);
  if (driver.signal) return EXIT.interrupted;
  return failed.length ? EXIT.failed : EXIT.ok;
}
