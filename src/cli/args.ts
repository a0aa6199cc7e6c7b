// A small, strict command-line parser: --flag value, --flag=value and boolean --flag. Unknown flags and bad
// numbers are errors that name the flag and the rule; an unknown flag names the nearest known one (or the field
// another trainer's name stands for), whichever form it was given in. FlagSpec is the one format every CLI's own
// flags are written in; config fields and settings come from the registry (src/schema/config/schema.ts).

import { clipText, isFieldName, nearestField, type SettingSpec } from '../schema/fields';

export interface FlagSpec {
  type: 'string' | 'number' | 'boolean';
  doc: string;
  /** The value's placeholder in --help and messages (`<dir>`); the type's name when absent. */
  value?: string;
  default?: string | number | boolean;
  /** For numbers: inclusive range. */
  min?: number;
  max?: number;
  integer?: boolean;
}

/** A setting of the registry (SETTINGS) as a flag: --<name> <value>, its doc. */
export function settingFlag(setting: SettingSpec): FlagSpec {
  return { type: 'string', value: setting.value, doc: setting.doc };
}

/** " <placeholder>" for a flag that takes a value, "" for a switch. */
export function flagValueText(spec: FlagSpec): string {
  return spec.type === 'boolean' ? '' : ` <${spec.value ?? spec.type}>`;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export type Parsed = Record<string, string | number | boolean | undefined>;

export function parseArgs(argv: readonly string[], specs: Record<string, FlagSpec>): Parsed {
  const out: Parsed = {};
  for (const [k, s] of Object.entries(specs)) if (s.default !== undefined) out[k] = s.default;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--'))
      throw new UsageError(`unexpected argument "${clipText(arg)}" (flags start with --; see --help)`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    const spec = isFieldName(specs, name) ? specs[name] : undefined;
    if (!spec) throw new UsageError(`${unknownFlagMessage(name, specs)} (see --help)`);
    if (spec.type === 'boolean') {
      out[name] = inline === undefined ? true : inline !== 'false';
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value (${spec.doc})`);
    if (spec.type === 'string') {
      out[name] = value;
      continue;
    }
    const n = Number(value);
    if (!Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got "${clipText(value)}"`);
    if (spec.integer && !Number.isInteger(n)) throw new UsageError(`--${name} must be an integer, got ${value}`);
    if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
      throw new UsageError(`--${name} must be in [${spec.min ?? '-inf'}, ${spec.max ?? 'inf'}], got ${value}`);
    }
    out[name] = n;
  }
  return out;
}

/**
 * "unknown flag --x; did you mean --y?" with the nearest flag, or the field another trainer's name stands for
 * (`--kl_coef` -> `--beta`, with `known` carrying TRL/verl/OpenRLHF names). Dashes and underscores are alike.
 */
export function unknownFlagMessage(name: string, known: Readonly<Record<string, object>>): string {
  const near = nearestField(name, known) ?? nearestField(name.replace(/-/g, '_'), known);
  if (!near) return `unknown flag --${clipText(name)}`;
  const foreign =
    near.via !== null && near.via === name.toLowerCase() ? ` (${name} is another trainer's name for it)` : '';
  return `unknown flag --${name}; did you mean --${near.field}?${foreign}`;
}

/** Index of the last argument an unknown flag at `i` takes: its value too when one follows (`--lr 1`), so the value is not read as a stray argument. */
export function skipUnknownValue(argv: readonly string[], i: number, inline: string | undefined): number {
  return inline === undefined && argv[i + 1] !== undefined && !argv[i + 1].startsWith('--') ? i + 1 : i;
}

export function helpText(usage: string, specs: Record<string, FlagSpec>): string {
  const rows = Object.entries(specs).map(([k, s]) => {
    const range = s.min !== undefined || s.max !== undefined ? ` [${s.min ?? ''}..${s.max ?? ''}]` : '';
    const def = s.default !== undefined ? ` (default ${s.default})` : '';
    return `  --${k}${flagValueText(s)}`.padEnd(26) + `${s.doc}${range}${def}`;
  });
  return `${usage}\n\n${rows.join('\n')}\n`;
}

/** A one-line progress bar for stderr: [#####.....] 40% label. */
export function progressBar(fraction: number, label: string, width = 28): string {
  const f = Math.max(0, Math.min(1, fraction));
  const filled = Math.round(f * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(f * 100).toFixed(0).padStart(3)}% ${label}`;
}

/**
 * The exit codes of every CLI: 0 done; 2 the input was refused before any work (a flag, a config field, a file's
 * contents: UsageError and the errors named in INPUT_ERRORS); 1 a failure while working (a file that cannot be
 * written, a device lost, non-finite metrics); 130 interrupted (SIGINT or SIGTERM; what was saved is said).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** Error classes (by name, so this module imports no layer below) that mean the input was refused: exit 2. */
const INPUT_ERRORS = new Set([
  'UsageError',
  'RLConfigError',
  'TrainerStateError',
  'ModelConfigError',
  'CheckpointError',
  'SafetensorsError',
  'TokenizerError',
  'HubIdError',
]);

/** The exit code for an error thrown by a CLI's main (EXIT): an input file that cannot be read is refused input too. */
export function exitCodeOf(e: unknown): number {
  if (!(e instanceof Error)) return EXIT.failed;
  const unreadableInput = e.name === 'FileError' && (e as Error & { input?: boolean }).input === true;
  return INPUT_ERRORS.has(e.name) || unreadableInput ? EXIT.usage : EXIT.failed;
}

/** Runs a CLI's main: its exit code on return; on a throw, "<name>: <message>" and exitCodeOf the error. */
export function runCli(name: string, main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(`${name}: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(exitCodeOf(e));
    },
  );
}
