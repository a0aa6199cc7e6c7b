// How each trainer declares the keys an export writes, for the booleans: an OpenRLHF flag is an argparse switch
// (store_true: given bare or not at all) or takes values (nargs of its type), as fixtures/openrlhf-args.json records
// from OpenRLHF's own parser (scripts/interop/openrlhf_parser.py); a TRL config field (a dataclass field) and a verl
// override (a Hydra leaf) always take a value. Also an argparse-equivalent reading of an OpenRLHF command through
// those declarations, which the tests apply to every preset's command (the interop tier runs OpenRLHF's own).

import openrlhfArgs from './fixtures/openrlhf-args.json';
import type { ExportTarget, MappingRow, Setting } from './mapping';

/** One OpenRLHF flag as argparse declares it. */
export interface FlagDeclaration {
  action: 'store' | 'store_true' | 'store_false';
  dest: string;
  nargs?: number | '*' | '+' | '?';
  type?: 'int' | 'float' | 'str';
  choices?: readonly (string | number)[];
}

/** OpenRLHF train_ppo_ray's flags, as its parser declares them (at the commit fixtures/openrlhf-args.json names). */
export const OPENRLHF_FLAGS: Readonly<Record<string, FlagDeclaration>> = openrlhfArgs.args as Record<
  string,
  FlagDeclaration
>;

/** How a key takes a boolean in a trainer: a switch (present or absent) or a value (True/False written out). */
export function booleanForm(target: ExportTarget, key: string): 'switch' | 'value' {
  if (target !== 'openrlhf') return 'value';
  const decl = OPENRLHF_FLAGS[key];
  if (!decl) throw new Error(`export: ${key} is not a flag of OpenRLHF's train_ppo_ray (fixtures/openrlhf-args.json)`);
  if (decl.action === 'store_true') return 'switch';
  throw new Error(
    `export: ${key} is declared ${decl.action}${decl.type ? ` of ${decl.type}` : ''} in OpenRLHF; a boolean cannot be written to it`,
  );
}

/**
 * A row with its booleans in the trainer's form: an OpenRLHF switch that is true stays (render.ts writes it bare);
 * one that is false is not given, said in the row's comment. Other targets' rows are returned as they are.
 */
export function withDeclaredBooleans(target: ExportTarget, row: MappingRow): MappingRow {
  if (target !== 'openrlhf') return row;
  const off: string[] = [];
  const settings: Setting[] = [];
  for (const s of row.settings) {
    if (typeof s.value === 'boolean' && booleanForm(target, s.key) === 'switch' && !s.value) off.push(s.key);
    else settings.push(s);
  }
  if (!off.length) return row;
  const said = `false: ${off.join(', ')} not given (a switch: store_true in OpenRLHF, it takes no value)`;
  return { ...row, settings, comment: row.comment ? `${said}; ${row.comment}` : said };
}

/** What an OpenRLHF command's words become, as argparse reads them, or argparse's complaint. */
export type ParsedFlags = { ok: true; values: Record<string, unknown> } | { ok: false; error: string };

/**
 * Reads `argv` as OpenRLHF's parser does (exact flag names; argparse would also take unique prefixes, which the
 * export never writes): a switch takes no word, a value flag takes nargs words (one when unset, all up to the next
 * flag for '*' and '+'), each converted by its type and checked against its choices. Words no flag takes are
 * "unrecognized arguments", argparse's error.
 */
export function parseOpenrlhfArgv(argv: readonly string[]): ParsedFlags {
  const values: Record<string, unknown> = {};
  const unrecognized: string[] = [];
  const isFlag = (w: string | undefined) => w !== undefined && /^--?[A-Za-z_]/.test(w);
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    const decl = OPENRLHF_FLAGS[word];
    if (!decl) {
      unrecognized.push(word);
      continue;
    }
    if (decl.action !== 'store') {
      values[decl.dest] = decl.action === 'store_true';
      continue;
    }
    const taken: string[] = [];
    const want = decl.nargs;
    if (typeof want === 'number') {
      for (let k = 0; k < want; k++) {
        if (argv[i + 1] === undefined || isFlag(argv[i + 1]))
          return { ok: false, error: `argument ${word}: expected ${want} arguments` };
        taken.push(argv[++i]);
      }
    } else if (want === '*' || want === '+') {
      while (argv[i + 1] !== undefined && !isFlag(argv[i + 1])) taken.push(argv[++i]);
      if (want === '+' && !taken.length)
        return { ok: false, error: `argument ${word}: expected at least one argument` };
    } else {
      if (argv[i + 1] === undefined || isFlag(argv[i + 1]))
        return { ok: false, error: `argument ${word}: expected one argument` };
      taken.push(argv[++i]);
    }
    const converted: unknown[] = [];
    for (const w of taken) {
      const v = decl.type === 'int' ? Number(w) : decl.type === 'float' ? Number(w) : w;
      if (
        typeof v === 'number' &&
        (w.trim() === '' || Number.isNaN(v) || (decl.type === 'int' && !/^[-+]?\d+$/.test(w)))
      )
        return { ok: false, error: `argument ${word}: invalid ${decl.type} value: '${w}'` };
      if (decl.choices && !decl.choices.includes(v as string | number))
        return { ok: false, error: `argument ${word}: invalid choice: '${w}'` };
      converted.push(v);
    }
    values[decl.dest] = want === undefined ? converted[0] : converted;
  }
  if (unrecognized.length) return { ok: false, error: `unrecognized arguments: ${unrecognized.join(' ')}` };
  return { ok: true, values };
}
