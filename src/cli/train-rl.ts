// `npm run train -- --task <task> --preset <algorithm> ...`: reinforcement learning with the trainer (src/rl) on
// the machine's WebGPU adapter through Dawn (or the CPU twins with --backend cpu). Starts from the task's shipped
// warm start unless --init says otherwise; every RL config field is a flag (--num_generations 8); --config reads a
// JSON file. Writes metrics.jsonl, rollouts.jsonl, eval.jsonl, the final checkpoint and the trainer state into --out.

import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GpuContext } from '../gpu';
import { MODEL_PRESETS, parameterCount } from '../model/config';
import { initParams } from '../reference/model';
import { Rng } from '../reference/random';
import {
  FIELD_SECTIONS,
  FIELD_SPECS,
  SECTIONS,
  PRESET_NAMES,
  RL_FIELDS,
  configToJson,
  configWarnings,
  decodeFieldText,
  isPresetName,
  kindText,
  resolveConfig,
  suggestion,
  type FieldSpec,
  type PresetName,
  type RLConfig,
  type RLField,
  type Section,
} from '../rl/config';
import { evalsOf, type GroupRecord } from '../rl/stream';
import type { MetricName } from '../schema/metrics';
import { Trainer } from '../rl/trainer';
import { decodeTrainerState, encodeTrainerState } from '../rl/trainer-state';
import { UsageError, progressBar, skipUnknownValue, unknownFlagMessage } from './args';
import { PUBLIC_DIR, loadCharTokenizerFile, loadCheckpointDir, saveCheckpointDir } from './files';
import { AUTOTUNE_FLAG, acquireTunedDevice } from './tuned-device';

/** Flags of the RL command that are not config fields. */
const COMMAND_FLAGS: Record<string, { value: string | null; doc: string }> = {
  preset: { value: 'name', doc: `algorithm preset: ${PRESET_NAMES.join(', ')} (default grpo)` },
  config: { value: 'file.json', doc: 'config file: an object of fields, optionally with "preset"; flags override it' },
  init: { value: 'dir', doc: "checkpoint directory to start from (default: the task's shipped warm start, else a fresh `model`)" },
  resume: { value: 'file', doc: 'trainer_state.safetensors of an earlier run: continue it exactly (same config)' },
  out: { value: 'dir', doc: 'output directory (default runs/<task>-<preset>-<time>)' },
  backend: { value: 'webgpu|cpu', doc: 'webgpu (default, Dawn) or cpu (the CPU twins: slow, smallest models only)' },
  'inspect-groups': { value: 'n', doc: 'groups per step written to rollouts.jsonl with per-token records (default 2)' },
  quiet: { value: null, doc: 'no progress bar' },
  autotune: { value: null, doc: AUTOTUNE_FLAG.doc },
  help: { value: null, doc: 'show this help' },
};

function fieldHelp(name: string, spec: FieldSpec): string {
  const def = spec.default === null ? 'null' : typeof spec.default === 'object' ? JSON.stringify(spec.default) : String(spec.default);
  const others = [spec.trl && `TRL ${spec.trl}`, spec.verl && `verl ${spec.verl}`, spec.openrlhf && `OpenRLHF ${spec.openrlhf}`].filter(Boolean).join('; ');
  return `  --${name}`.padEnd(34) + `${spec.doc}\n${' '.repeat(34)}${kindText(spec)}; default ${def}${others ? `\n${' '.repeat(34)}elsewhere: ${others}${spec.note ? ` (${spec.note})` : ''}` : ''}`;
}

export function rlHelpText(): string {
  const cmd = Object.entries(COMMAND_FLAGS).map(([k, f]) => `  --${k}${f.value ? ` <${f.value}>` : ''}`.padEnd(34) + f.doc);
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
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}" (flags start with --; see --help)`);
    const [raw, inline] = arg.slice(2).split(/=(.*)/s, 2);
    const name = raw in RL_FIELDS ? raw : raw.replace(/-/g, '_') in RL_FIELDS ? raw.replace(/-/g, '_') : raw;
    if (name in COMMAND_FLAGS) {
      if (COMMAND_FLAGS[name].value === null) command[name] = inline === undefined ? true : inline !== 'false';
      else {
        const v = inline ?? argv[++i];
        if (v === undefined) throw new UsageError(`--${name} needs a value <${COMMAND_FLAGS[name].value}>`);
        command[name] = v;
      }
      continue;
    }
    if (!(name in RL_FIELDS)) {
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

function warmStartOf(task: string): WarmStart | null {
  const path = new URL('checkpoints/manifest.json', PUBLIC_DIR);
  if (!existsSync(path)) return null;
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as { checkpoints: WarmStart[] };
  return manifest.checkpoints.find((c) => c.task === task) ?? null;
}

/** The config from --config, --preset and field flags, validated (RLConfigError names every bad field). */
export function configFromArgs(parsed: ParsedRlArgs): { config: RLConfig; preset: PresetName } {
  let fileFields: Record<string, unknown> = {};
  let filePreset: string | null = null;
  if (typeof parsed.command.config === 'string') {
    const text = readFileSync(parsed.command.config, 'utf8');
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`--config ${parsed.command.config}: not valid JSON (${(e as Error).message})`);
    }
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new UsageError(`--config ${parsed.command.config}: the top level must be an object of fields`);
    const { preset, ...rest } = obj as Record<string, unknown>;
    if (preset !== undefined && typeof preset !== 'string') throw new UsageError(`--config: "preset" must be a preset name`);
    filePreset = (preset as string | undefined) ?? null;
    fileFields = rest;
  }
  const presetName = (parsed.command.preset as string | undefined) ?? filePreset ?? 'grpo';
  if (!isPresetName(presetName)) throw new UsageError(`--preset must be one of ${PRESET_NAMES.join(', ')}; got "${presetName}"${suggestion(presetName, PRESET_NAMES)}`);
  return { config: resolveConfig(presetName, { ...fileFields, ...parsed.fields }), preset: presetName };
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

export async function trainRl(argv: string[]): Promise<number> {
  const parsed = parseRlArgs(argv);
  if (parsed.command.help) {
    process.stdout.write(rlHelpText());
    return 0;
  }
  if (parsed.fields.task === undefined && typeof parsed.command.config !== 'string' && typeof parsed.command.resume !== 'string') {
    throw new UsageError('--task is required (see --help)');
  }
  const { tok, json: tokenizerJson } = loadCharTokenizerFile();
  const resume = typeof parsed.command.resume === 'string' ? decodeTrainerState(new Uint8Array(readFileSync(parsed.command.resume))) : undefined;
  let config: RLConfig;
  let preset: PresetName | null = null;
  let init;
  let source: string;
  if (resume) {
    config = resume.meta.config;
    init = { config: resume.meta.modelConfig, params: resume.learner.policy };
    source = `resumed from ${parsed.command.resume} at step ${resume.meta.step}`;
  } else {
    // A warm start fixes the difficulty it was trained at unless the user sets one.
    const taskName = (parsed.fields.task as string | undefined) ?? null;
    const warm = typeof parsed.command.init !== 'string' && parsed.fields.checkpoint == null && taskName ? warmStartOf(taskName) : null;
    if (warm && parsed.fields.difficulty === undefined) parsed.fields.difficulty = warm.difficulty;
    const resolved = configFromArgs(parsed);
    config = resolved.config;
    preset = resolved.preset;
    const named = config.checkpoint === null ? null : existsSync(config.checkpoint) ? config.checkpoint : fileURLToPath(new URL(`checkpoints/${config.checkpoint}`, PUBLIC_DIR));
    const dir =
      typeof parsed.command.init === 'string' ? parsed.command.init : (named ?? (warm && warm.task === config.task ? fileURLToPath(new URL(warm.path, PUBLIC_DIR)) : null));
    if (dir) {
      const { ck } = loadCheckpointDir(dir);
      init = { config: ck.config, params: ck.params };
      source = dir;
    } else {
      const mc = MODEL_PRESETS[config.model];
      const p = initParams(mc, new Rng(config.seed), { std: 0.02 });
      init = { config: mc, params: Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)])) };
      source = `a fresh ${config.model} model (no warm start for ${config.task})`;
    }
  }
  for (const w of configWarnings(config)) console.error(`warning: ${w}`);
  const backendName = (parsed.command.backend as string | undefined) ?? 'webgpu';
  if (backendName !== 'webgpu' && backendName !== 'cpu') throw new UsageError(`--backend must be webgpu or cpu, got "${backendName}"`);
  let ctx: GpuContext | null = null;
  if (backendName === 'webgpu') {
    ctx = await acquireTunedDevice({ tune: parsed.command.autotune !== false });
  }
  const out = (parsed.command.out as string | undefined) ?? join('runs', `${config.task}-${preset ?? 'resume'}-${Date.now()}`);
  mkdirSync(out, { recursive: true });
  const inspectGroups = parsed.command['inspect-groups'] !== undefined ? Number(parsed.command['inspect-groups']) : 2;
  if (!Number.isInteger(inspectGroups) || inspectGroups < 0) throw new UsageError(`--inspect-groups must be a whole number >= 0`);
  const trainer = await Trainer.create({
    config,
    init,
    tokenizer: tok,
    backend: ctx ? { kind: 'webgpu', ctx } : { kind: 'cpu' },
    inspectGroups,
    resume,
  });
  console.error(
    `${config.task} (difficulty ${trainer.derived.difficulty}), ${preset ?? 'resumed'}, ${parameterCount(init.config).toLocaleString('en-US')} parameters from ${source}; ` +
      `${config.steps} steps of ${trainer.derived.sequencesPerStep} completions, ${trainer.derived.optimizerStepsPerBatch} optimizer step(s) each; out ${out}`,
  );
  writeFileSync(join(out, 'rl_config.json'), `${configToJson(config, preset)}\n`);
  const paths = { metrics: join(out, 'metrics.jsonl'), rollouts: join(out, 'rollouts.jsonl'), eval: join(out, 'eval.jsonl') };
  if (!resume) for (const p of Object.values(paths)) writeFileSync(p, '');
  const t0 = performance.now();
  const startStep = trainer.step;
  let last: Record<string, number> = {};
  const quiet = Boolean(parsed.command.quiet);
  for await (const r of trainer.run()) {
    const finite = Object.entries(r.metrics).filter(([, v]) => !Number.isFinite(v));
    appendFileSync(paths.metrics, `${JSON.stringify({ step: r.step, optimizer_step: r.optimizerStep, update: r.update, updates: r.updates, epoch: r.epoch, minibatch: r.minibatch, ...r.metrics })}\n`);
    if (r.groups?.length) appendFileSync(paths.rollouts, `${jsonlGroups(r.step, r.groups)}\n`);
    // The step-0 evaluation (before training) comes first, so eval.jsonl reads in step order.
    for (const e of evalsOf(r)) appendFileSync(paths.eval, `${JSON.stringify(e)}\n`);
    if (finite.length) {
      trainer.destroy();
      throw new Error(`step ${r.step}: non-finite metrics ${finite.map(([k, v]) => `${k}=${v}`).join(', ')} (the run stopped; metrics.jsonl has every step so far)`);
    }
    last = r.metrics;
    if (!quiet) {
      const done = r.step - startStep;
      const eta = ((performance.now() - t0) / 1000 / done) * (config.steps - r.step);
      const ev = r.eval ? ` eval acc ${(r.eval.accuracy * 100).toFixed(0)}% pass@${r.eval.passAtK.length} ${(r.eval.passAtK[r.eval.passAtK.length - 1] * 100).toFixed(0)}%` : '';
      const m = (name: MetricName, digits: number, scale = 1) => ((r.metrics[name] ?? NaN) * scale).toFixed(digits);
      process.stderr.write(
        `\r${progressBar(r.step / config.steps, `step ${r.step}/${config.steps} reward ${m('reward', 3)} acc ${m('accuracy', 0, 100)}% entropy ${m('entropy', 3)} clip ${m('clip_ratio/region_mean', 3)}${ev} eta ${eta.toFixed(0)}s`)}   `,
      );
    }
  }
  if (!quiet) process.stderr.write('\n');
  const ck = await trainer.exportCheckpoint();
  saveCheckpointDir(out, ck, tokenizerJson);
  writeFileSync(join(out, 'trainer_state.safetensors'), encodeTrainerState(await trainer.saveState()));
  console.error(`done: ${trainer.step} steps in ${((performance.now() - t0) / 1000).toFixed(1)} s; last reward ${last.reward?.toFixed(3)}, accuracy ${((last.accuracy ?? 0) * 100).toFixed(1)}%`);
  console.log(out);
  trainer.destroy();
  ctx?.destroy();
  return 0;
}
