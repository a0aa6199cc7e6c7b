// `npm run export -- --to trl|verl|openrlhf [--preset P] [--config file] [--<field> value ...] [--hf-model M] --out DIR`:
// writes an experiment for another trainer (src/export): the script or launch command, its reward module, the
// prompts as JSONL and a README with the mapping table. The config comes from the same flags, file and preset as
// `npm run train` (train-rl.ts parses them); nothing is trained here.
// `npm run export -- --to hf --run RUN_DIR --out DIR`: a trained run's policy as the folders transformers and PEFT
// load (<run>-step<N>/ and, for LoRA, <run>-step<N>-adapter/), by the same code as the page's checkpoint export.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_MODEL_PATH,
  EXPORT_TARGETS,
  ExportValueError,
  TARGET_VERSIONS,
  exportExperiment,
  type Export,
  type ExportTarget,
} from '../export';
import { LORA_ADAPTER_DIR, exportPolicyFolder } from '../engine/run-session';
import {
  loadStartTokenizerFiles,
  checkpointDir,
  readSourceGenerationConfig,
  readSourceModelConfig,
} from '../engine/start-policy';
import { tokenizerFromFiles } from '../io/hf-folder';
import type { Tokenizer } from '../io/tokenizer';
import { loadingLines } from '../io/hf-model-folder';
import { PEFT_CONFIG_FILE, PEFT_WEIGHTS_FILE } from '../io/peft';
import { suggestion, type RLConfig } from '../schema/config';
import { UsageError, runCli } from './args';
import { CLI_ASSETS, TRAINER_STATE_FILE, mkdirOrFail, readFileOrFail, writeFileAtomic } from './files';
import { configFromArgs, parseRlArgs, readTrainerStateFile, rlHelpText } from './train-rl';

/** The export's own flags; every other flag is the train command's (preset, config, out, and each config field). */
const EXPORT_FLAGS = {
  to: `the trainer: ${EXPORT_TARGETS.join(', ')} (${EXPORT_TARGETS.map((t) => TARGET_VERSIONS[t]).join('; ')})`,
  run: 'with --to hf: the folder of a run `npm run train` wrote (--out of that run)',
  'hf-model': `the starting weights: a Hugging Face format checkpoint folder or a hub model name, of letters, digits and _ . - / (default ${DEFAULT_MODEL_PATH}, a folder beside the script)`,
} as const;

export function exportHelpText(): string {
  return [
    'usage: npm run export -- --to trl|verl|openrlhf [--preset P] [--config file.json] [--<field> value ...] [--hf-model M] --out DIR',
    '       npm run export -- --to hf --run RUN_DIR --out DIR   (the trained policy as the folder from_pretrained loads)',
    '',
    'export flags:',
    ...Object.entries(EXPORT_FLAGS).map(([k, doc]) => `  --${k} <value>`.padEnd(34) + doc),
    '',
    'The rest are the flags of `npm run train` (below; --init, --resume, --backend and the like are not used here).',
    '',
    rlHelpText(),
  ].join('\n');
}

/** Takes the export's own flags out of argv; the rest goes to the train command's parser. */
function splitExportFlags(argv: readonly string[]): {
  own: Partial<Record<keyof typeof EXPORT_FLAGS, string>>;
  rest: string[];
} {
  const own: Partial<Record<keyof typeof EXPORT_FLAGS, string>> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [raw, inline] = argv[i].startsWith('--') ? argv[i].slice(2).split(/=(.*)/s, 2) : [null, undefined];
    if (raw !== null && raw in EXPORT_FLAGS) {
      const v = inline ?? argv[++i];
      if (v === undefined || v.startsWith('--'))
        throw new UsageError(`--${raw} needs a value (${EXPORT_FLAGS[raw as keyof typeof EXPORT_FLAGS]})`);
      own[raw as keyof typeof EXPORT_FLAGS] = v;
    } else rest.push(argv[i]);
  }
  return { own, rest };
}

/**
 * The tokenizer of the model the config trains (its checkpoint's tokenizer.json and tokenizer_config.json, the chat
 * template inside; the character vocabulary for a fresh model or a folder without one), read as a run reads it.
 */
async function labTokenizer(config: RLConfig): Promise<Tokenizer> {
  const { tokenizerJson, tokenizerConfigJson } = await loadStartTokenizerFiles(config, CLI_ASSETS);
  try {
    return await tokenizerFromFiles(tokenizerJson, tokenizerConfigJson);
  } catch (e) {
    const dir = config.checkpoint === null ? null : checkpointDir(config.checkpoint);
    throw new UsageError(`checkpoint "${config.checkpoint}" (${dir}): ${(e as Error).message}`);
  }
}

/** Runs the command; returns the files written (paths under --out). */
export async function runExport(
  argv: readonly string[],
  log: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<string[]> {
  const { own, rest } = splitExportFlags(argv);
  if (own.to === HF_TARGET) throw new UsageError("--to hf is exportCommand's (it reads a run folder)");
  const parsed = parseRlArgs(rest);
  if (parsed.command.help) {
    log(exportHelpText());
    return [];
  }
  const target = own.to;
  const targets = [...EXPORT_TARGETS, HF_TARGET];
  if (!target) throw new UsageError(`--to is required: ${targets.join(', ')}`);
  if (!(EXPORT_TARGETS as readonly string[]).includes(target))
    throw new UsageError(`--to must be one of ${targets.join(', ')}; got "${target}"${suggestion(target, targets)}`);
  if (typeof parsed.command.out !== 'string') throw new UsageError('--out <dir> is required');
  const { config, preset } = configFromArgs(parsed);
  const tokenizer = target === 'verl' ? await labTokenizer(config) : undefined;
  let e: Export;
  try {
    e = exportExperiment(target as ExportTarget, config, {
      preset,
      model: own['hf-model'] ?? DEFAULT_MODEL_PATH,
      tokenizer,
    });
  } catch (err) {
    // A value the trainer's files cannot hold is the person's input: refused by name, exit 2, nothing written.
    if (err instanceof ExportValueError) throw new UsageError(err.message);
    throw err;
  }
  const out = parsed.command.out;
  const written: string[] = [];
  for (const f of e.files) {
    const path = join(out, f.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.text);
    written.push(path);
  }
  const commented = e.rows.filter((r) => r.settings.length === 0).length;
  log(
    `${target}: ${e.keys.length} settings, ${commented} of ${e.rows.length} fields commented (no equivalent or written elsewhere); files in ${out}:`,
  );
  for (const p of written) log(`  ${p}`);
  return written;
}

/** `--to hf`: a run folder's policy written as the Hugging Face folders. */
const HF_TARGET = 'hf';

/**
 * Writes the policy a run folder holds (its last save: model.safetensors, config.json, the tokenizer files and, for a
 * LoRA run, adapter/) as the folders transformers and PEFT load, under `--out`, through exportPolicyFolder (the page's
 * code path). The source model's generation_config.json and config.json (whose eos_token_id the exported config.json
 * keeps) are read where the run's checkpoint names a folder here.
 */
async function exportRunFolder(
  runDir: string | undefined,
  rest: readonly string[],
  log: (line: string) => void,
): Promise<string[]> {
  if (!runDir) throw new UsageError('--to hf needs --run <the folder of a run npm run train wrote>');
  let out: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const [flag, inline] = rest[i].split(/=(.*)/s, 2);
    if (flag === '--out' && (inline ?? rest[i + 1]) !== undefined) out = inline ?? rest[++i];
    else throw new UsageError(`--to hf takes --run and --out only; got ${JSON.stringify(rest[i])}`);
  }
  if (!out) throw new UsageError('--out <dir> is required');
  const rlConfig = JSON.parse(readFileOrFail(join(runDir, 'rl_config.json')).toString('utf8')) as {
    checkpoint?: unknown;
  };
  const checkpoint = typeof rlConfig.checkpoint === 'string' ? rlConfig.checkpoint : null;
  const names = ['model.safetensors', 'config.json', 'tokenizer.json', 'tokenizer_config.json'];
  const adapter = [`${LORA_ADAPTER_DIR}/${PEFT_WEIGHTS_FILE}`, `${LORA_ADAPTER_DIR}/${PEFT_CONFIG_FILE}`];
  const files = [...names, ...adapter]
    .filter((n) => n !== 'tokenizer_config.json' || existsSync(join(runDir, n)))
    .filter((n) => !adapter.includes(n) || existsSync(join(runDir, LORA_ADAPTER_DIR)))
    .map((name) => {
      const bytes = new Uint8Array(readFileOrFail(join(runDir, name)));
      return { name, data: name.endsWith('.json') ? new TextDecoder().decode(bytes) : bytes };
    });
  const state = readTrainerStateFile(join(runDir, TRAINER_STATE_FILE));
  const e = exportPolicyFolder(
    basename(resolve(runDir)),
    { step: state.state.meta.step, files },
    await readSourceGenerationConfig(checkpoint, CLI_ASSETS),
    checkpoint,
    await readSourceModelConfig(checkpoint, CLI_ASSETS),
  );
  const written: string[] = [];
  for (const f of e.files) {
    const path = join(out, f.path);
    mkdirOrFail(dirname(path));
    writeFileAtomic(path, f.data);
    written.push(path);
  }
  log(`the policy at step ${state.state.meta.step} as ${e.adapterFolder ? 'two folders' : 'a folder'} in ${out}:`);
  for (const p of written) log(`  ${p}`);
  log('load it with:');
  for (const l of loadingLines(e, checkpoint)) log(`  ${l}`);
  return written;
}

/** The command: `--to hf` exports a run folder's policy, any other target an experiment (runExport). */
export async function exportCommand(
  argv: readonly string[],
  log: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<string[]> {
  const { own, rest } = splitExportFlags(argv);
  if (own.to === HF_TARGET) return exportRunFolder(own.run, rest, log);
  return runExport(argv, log);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runCli('export', async (argv) => {
    await exportCommand(argv);
    return 0;
  });
}
