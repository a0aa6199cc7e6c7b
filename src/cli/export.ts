// `npm run export -- --to trl|verl|openrlhf [--preset P] [--config file] [--<field> value ...] [--hf-model M] --out DIR`:
// writes an experiment for another trainer (src/export): the script or launch command, its reward module, the
// prompts as JSONL and a README with the mapping table. The config comes from the same flags, file and preset as
// `npm run train` (train-rl.ts parses them); nothing is trained here.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
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
import { suggestion } from '../rl/config';
import { UsageError, runCli } from './args';
import { configFromArgs, parseRlArgs, rlHelpText } from './train-rl';

/** The export's own flags; every other flag is the train command's (preset, config, out, and each config field). */
const EXPORT_FLAGS = {
  to: `the trainer: ${EXPORT_TARGETS.join(', ')} (${EXPORT_TARGETS.map((t) => TARGET_VERSIONS[t]).join('; ')})`,
  'hf-model': `the starting weights: a Hugging Face format checkpoint folder or a hub model name, of letters, digits and _ . - / (default ${DEFAULT_MODEL_PATH}, a folder beside the script)`,
} as const;

export function exportHelpText(): string {
  return [
    'usage: npm run export -- --to trl|verl|openrlhf [--preset P] [--config file.json] [--<field> value ...] [--hf-model M] --out DIR',
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

/** Runs the command; returns the files written (paths under --out). */
export function runExport(
  argv: readonly string[],
  log: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): string[] {
  const { own, rest } = splitExportFlags(argv);
  const parsed = parseRlArgs(rest);
  if (parsed.command.help) {
    log(exportHelpText());
    return [];
  }
  const target = own.to;
  if (!target) throw new UsageError(`--to is required: ${EXPORT_TARGETS.join(', ')}`);
  if (!(EXPORT_TARGETS as readonly string[]).includes(target))
    throw new UsageError(
      `--to must be one of ${EXPORT_TARGETS.join(', ')}; got "${target}"${suggestion(target, EXPORT_TARGETS)}`,
    );
  if (typeof parsed.command.out !== 'string') throw new UsageError('--out <dir> is required');
  const { config, preset } = configFromArgs(parsed);
  let e: Export;
  try {
    e = exportExperiment(target as ExportTarget, config, { preset, model: own['hf-model'] ?? DEFAULT_MODEL_PATH });
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

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runCli('export', async (argv) => {
    runExport(argv);
    return 0;
  });
}
