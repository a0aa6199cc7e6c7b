// No value changes the meaning of an exported file. Every text field of the config that an export writes (every
// string field of the schema, and the model name) is given hostile text: each quote kind, backticks, $(...),
// ${...}, newlines, NUL, """ and ''', backslashes, U+2028/U+2029, bidi and escape codes, unicode, emoji, 10 KB,
// and seeded random mixes. For every target and the one-file bundle: the export is either refused with a message
// naming the field (exactly when the value is one the target cannot hold), or every .sh file passes `bash -n`,
// every .py compiles (python3, when present), every JSON file parses, and the value read back from each file
// (shell assignments sourced alone, Python literals by ast.literal_eval, JSON, the value files) is the value
// given, the launch scripts' argument arrays are those of a benign value, and no marker file is ever created.
// Nothing generated is run but the assignment lines and the bundle (which only writes files).

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from './random';
import { FIELD_NAMES, FIELD_SPECS, resolveConfig, type RLConfig, type RLField } from '../schema/config';
import { parsePromptList } from '../tasks';
import {
  EXPORT_TARGETS,
  ExportValueError,
  bundleScript,
  exportExperiment,
  type Export,
  type ExportTarget,
} from '../export';
import { checkModelName, commentText, pyString, shellQuote, shellWord } from './quote';
import { CONFIG_FILE, valueFileOf } from '../export/render';

const ROOT = mkdtempSync(join(tmpdir(), 'export-quoting-'));
/** The file a hostile value tries to create; it must never exist. */
const MARK = join(ROOT, 'pwned');
const TOUCH = `touch ${MARK}`;

const HAS_PYTHON = spawnSync('python3', ['--version']).status === 0;

/** The model name's pseudo-field (the CLI's --hf-model, the page's Model input). */
const MODEL_FIELD = 'hf-model';

/** Every string-typed field of the schema, and the model name: every text an export writes. */
const TEXT_FIELDS: readonly string[] = [...FIELD_NAMES.filter((f) => FIELD_SPECS[f].kind === 'string'), MODEL_FIELD];

const FIXED: readonly string[] = [
  "it's",
  'say "hi"',
  "'",
  '"',
  '`',
  `\`${TOUCH}\``,
  `$(${TOUCH})`,
  '${X}',
  `\${X:-$(${TOUCH})}`,
  '$HOME',
  'a\nb',
  `\n${TOUCH}\n`,
  'a\r\nb',
  `\r${TOUCH}`,
  'x\0y',
  '"""',
  "'''",
  `"""\nimport os; os.system("${TOUCH}")\n"""`,
  "'''; import os #",
  '\\',
  'a\\nb',
  'end\\',
  'sep\u2028ara\u2029tor',
  `bidi \u202e}; ${TOUCH}`,
  'esc \u001b[2J \u0085 \u007f',
  'tab\there',
  'ünïcødé 漢字 Ω',
  'emoji 🙂👍🏽🇫🇷',
  'x'.repeat(10 * 1024),
  `'; ${TOUCH}; echo '`,
  `"; ${TOUCH}; echo "`,
  `\n)\n${TOUCH}\n(\n`,
  `# \n${TOUCH}`,
  `a\nRL_LAB_EXPORT_EOF\n${TOUCH}\nRL_LAB_EXPORT_EOF`,
  'lone \ud800 surrogate',
  'org/model-1.5',
  '../weights/run_1',
  'Qwen/Qwen2.5-0.5B-Instruct',
  '/models/llama_3.2-1b',
];

const PIECES: readonly string[] = [
  ...`'"\`\\$(){}#;|&<>*?~!=,[] \t\n\r\0\u2028\u2029\u202e`,
  '"""',
  "'''",
  '$(',
  '${',
  TOUCH,
  'RL_LAB_EXPORT_EOF',
  'é',
  '🙂',
];

/** Deterministic random mixes of the dangerous pieces and arbitrary code points below U+3000. */
function randomMixes(n: number): string[] {
  const rng = new Rng(26);
  return Array.from({ length: n }, () => {
    let s = '';
    for (let k = 1 + rng.int(24); k > 0; k--)
      s += rng.next() < 0.7 ? PIECES[rng.int(PIECES.length)] : String.fromCodePoint(rng.int(0x3000));
    return s;
  });
}

const STRINGS: readonly string[] = [...FIXED, ...randomMixes(12)];

const BASE = resolveConfig('grpo', { steps: 1, train_batch_size: 2, eval_items: 1, eval_every: 1 });

/** The prompt list a hostile text is put in: two rows, the text as a prompt and as an answer. */
const promptList = (s: string) =>
  `${JSON.stringify({ prompt: s, answer: '1' })}\n${JSON.stringify({ prompt: 'two', answer: s })}\n`;

/** A benign value of each field, for the fields a hostile text cannot go in and for the baseline export. */
const BENIGN: Readonly<Record<string, string>> = { [MODEL_FIELD]: 'org/benign' };

/** The value a field gets for the text `s` (the prompt list: `s` in its rows). */
const textOf = (field: string, s: string) => (field === 'prompts' ? promptList(s) : s);

/**
 * One export's config and model: every field in `hostile` gets its value for `s`, the others a benign value;
 * schema validation bypassed (the export must not rely on it).
 */
function configOf(s: string, hostile: readonly string[]): { config: RLConfig; model: string } {
  const text = (field: string) => textOf(field, hostile.includes(field) ? s : (BENIGN[field] ?? 'benign'));
  const config: Record<string, unknown> = { ...BASE, task: 'prompts' };
  for (const field of TEXT_FIELDS) if (field !== MODEL_FIELD) config[field] = text(field);
  return { config: config as RLConfig, model: text(MODEL_FIELD) };
}

/** What the export must refuse, by this test's own reading of the rules (quote.ts, the prompt list's). */
function refuses(field: string, value: string): boolean {
  if (field === MODEL_FIELD) return value.length > 1024 || !/^[A-Za-z0-9_./][A-Za-z0-9_./-]*$/.test(value);
  if (field === 'prompts') {
    try {
      parsePromptList(value);
      return false;
    } catch {
      return true;
    }
  }
  return value.includes('\0') || /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);
}

/** One export: every field that can hold `s` holds it. */
interface Case {
  s: string;
  /** The fields holding `s` (its value for each: textOf). */
  fields: string[];
  target: ExportTarget;
  dir: string;
  e: Export;
  config: RLConfig;
  model: string;
}

const cases: Case[] = [];
/** The (field, string, target) combinations refused, each with the message of its own export. */
const refusals: { field: string; s: string; target: ExportTarget; message: string }[] = [];
/** Where each target's export of benign values is (the launch arguments every case must keep). */
const benignDirs = new Map<ExportTarget, string>();

function writeExport(e: Export, dir: string): void {
  for (const f of e.files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.text);
  }
  writeFileSync(join(dir, 'bundle.sh'), bundleScript(e));
}

/** A path as one shell word. */
const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** The part of a launch script that sets MODEL and ARGS (its assignments and comments, nothing that runs). */
function assignmentBlock(text: string): string {
  const lines = text.split('\n');
  const from = lines.indexOf('MODEL="${MODEL:-}"');
  const to = lines.indexOf(')', lines.indexOf('ARGS=('));
  expect(from).toBeGreaterThan(0);
  expect(to).toBeGreaterThan(from);
  return `${lines
    .slice(from, to + 1)
    .filter((l) => !l.startsWith('python3 '))
    .join('\n')}\n`;
}

/** The literal at the start of `text` (a Python string literal as quote.ts writes it). */
function leadingLiteral(text: string): string {
  expect(text[0]).toBe('"');
  for (let i = 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return text.slice(0, i + 1);
  }
  throw new Error(`no closing quote in ${text.slice(0, 80)}`);
}

/** Each .sh file's `bash -n` failures, and the MODEL and ARGS each launch script's assignment block sets. */
function runShell(sh: string[], blocks: string[]): { failures: string[]; values: string[][] } {
  const driver = join(ROOT, 'driver.sh');
  writeFileSync(
    driver,
    [
      ...sh.map((f) => `bash -n ${q(f)} 2>/dev/null || printf 'FAIL %s\\n' ${q(f)}`),
      ...blocks.map(
        (b) =>
          `( set -eu; cd ${q(ROOT)}; HERE=/here; GPUS=1; unset MODEL; . ${q(b)}; printf '%s\\0' "$MODEL" "\${ARGS[@]}" ) > ${q(`${b}.out`)}`,
      ),
      '',
    ].join('\n'),
  );
  const r = spawnSync('bash', [driver], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return {
    failures: r.stdout.split('\n').filter((l) => l.startsWith('FAIL ')),
    values: blocks.map((b) => readFileSync(`${b}.out`, 'utf8').split('\0').slice(0, -1)),
  };
}

/** One python3 for every file and literal: compile errors, each literal's value, each TRL script's --model default. */
function runPython(files: string[], literals: string[], trl: string[]) {
  const program = `
import ast, json, sys
job = json.load(open(sys.argv[1], encoding="utf-8"))
out = {"errors": [], "literals": [], "defaults": []}
for p in job["files"]:
    try:
        compile(open(p, "rb").read(), p, "exec")
    except Exception as e:
        out["errors"].append(p + ": " + repr(e))
for lit in job["literals"]:
    out["literals"].append(ast.literal_eval(lit))
for p in job["trl"]:
    found = None
    for node in ast.walk(ast.parse(open(p, "rb").read())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument" and node.args and ast.literal_eval(node.args[0]) == "--model":
            found = [ast.literal_eval(k.value) for k in node.keywords if k.arg == "default"][0]
    out["defaults"].append(found)
sys.stdout.write(json.dumps(out))
`;
  const job = join(ROOT, 'job.json');
  writeFileSync(job, JSON.stringify({ files, literals, trl }));
  const r = spawnSync('python3', ['-c', program, job], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 28 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { errors: string[]; literals: string[]; defaults: (string | null)[] };
}

/** The literal a one-line text field has in a file's `# field = ...` comment, or in the README's table. */
function commentLiteral(c: Case, field: string, path: string): string {
  const text = c.e.files.find((f) => f.path === path)!.text;
  const marker = path === 'README.md' ? `| \`${field}\` | \`` : `# ${field} = `;
  const at = text.indexOf(marker);
  expect(at, `${path} has ${marker}`).toBeGreaterThanOrEqual(0);
  return leadingLiteral(text.slice(at + marker.length));
}

const combinations = TEXT_FIELDS.length * STRINGS.length * EXPORT_TARGETS.length;

beforeAll(() => {
  for (const target of EXPORT_TARGETS) {
    const dir = join(ROOT, `benign-${target}`);
    const { config, model } = configOf('', []);
    writeExport(exportExperiment(target, config, { preset: 'grpo', model, maxRows: 2 }), dir);
    benignDirs.set(target, dir);
  }
  for (const [j, s] of STRINGS.entries()) {
    const fields = TEXT_FIELDS.filter((f) => !refuses(f, textOf(f, s)));
    for (const target of EXPORT_TARGETS) {
      // Each refused combination alone: the export names the field.
      for (const field of TEXT_FIELDS.filter((f) => !fields.includes(f))) {
        const { config, model } = configOf(s, [field]);
        try {
          exportExperiment(target, config, { preset: 'grpo', model, maxRows: 2 });
          refusals.push({ field, s, target, message: '(written)' });
        } catch (err) {
          if (!(err instanceof ExportValueError)) throw err;
          refusals.push({ field, s, target, message: err.message });
        }
      }
      if (!fields.length) continue;
      // The others together in one export.
      const { config, model } = configOf(s, fields);
      const e = exportExperiment(target, config, { preset: 'grpo', model, maxRows: 2 });
      const dir = join(ROOT, `${j}-${target}`);
      writeExport(e, dir);
      cases.push({ s, fields, target, dir, e, config, model });
    }
  }
  const written = cases.reduce((n, c) => n + c.fields.length, 0);
  console.log(
    `export quoting: ${TEXT_FIELDS.length} fields (${TEXT_FIELDS.join(', ')}) x ${STRINGS.length} strings (${FIXED.length} fixed, ${STRINGS.length - FIXED.length} seeded random) x ${EXPORT_TARGETS.length} targets (${EXPORT_TARGETS.join(', ')}, each also as its bundle) = ${combinations} combinations: ${written} written and checked (in ${cases.length} exports, the fields of one string together), ${refusals.length} refused by name`,
  );
}, 300_000);

afterAll(() => rmSync(ROOT, { recursive: true, force: true }));

describe('exports of hostile text', () => {
  it('refuses exactly the values a target cannot hold, naming the field', () => {
    const written = cases.reduce((n, c) => n + c.fields.length, 0);
    expect(written + refusals.length).toBe(combinations);
    for (const r of refusals) {
      expect(refuses(r.field, textOf(r.field, r.s)), `${r.field} ${JSON.stringify(r.s.slice(0, 80))}`).toBe(true);
      expect(r.message.startsWith(`${r.field}: `), `${r.field} ${r.target}: ${r.message}`).toBe(true);
    }
    // Every field is written with several of the strings in every target (the model name only with names).
    for (const field of TEXT_FIELDS)
      for (const target of EXPORT_TARGETS)
        expect(cases.filter((c) => c.target === target && c.fields.includes(field)).length, field).toBeGreaterThan(2);
  });

  it('every shell file parses, the assignments set the value given, and the launch arguments are unchanged', () => {
    const sh = cases.flatMap((c) => [
      ...c.e.files.filter((f) => f.path.endsWith('.sh')).map((f) => join(c.dir, f.path)),
      join(c.dir, 'bundle.sh'),
    ]);
    const launch = cases.filter((c) => c.target !== 'trl');
    const blockOf = (dir: string, entry: string) => {
      const path = join(dir, 'assignments.sh');
      writeFileSync(path, assignmentBlock(readFileSync(join(dir, entry), 'utf8')));
      return path;
    };
    const blocks = launch.map((c) => blockOf(c.dir, c.e.entry));
    const benign = (['verl', 'openrlhf'] as const).map((t) => blockOf(benignDirs.get(t)!, `run_${t}.sh`));
    const { failures, values } = runShell(sh, [...blocks, ...benign]);
    console.log(
      `export quoting: ${sh.length} shell files through bash -n, ${blocks.length} assignment blocks read back`,
    );
    expect(failures).toEqual([]);
    const benignArgs = { verl: values[blocks.length], openrlhf: values[blocks.length + 1] };
    launch.forEach((c, i) => {
      const [model, ...args] = values[i];
      expect(model, `${c.target} ${JSON.stringify(c.s.slice(0, 80))}`).toBe(c.model);
      const [benignModel, ...expected] = benignArgs[c.target as 'verl' | 'openrlhf'];
      // A prompt list's longest prompt and answer set the length limits: only those numbers may differ.
      const shape = (a: string) => (c.fields.includes('prompts') ? a.replace(/\d+/g, 'N') : a);
      expect(args.map(shape), `${c.target} ${JSON.stringify(c.s.slice(0, 80))}`).toEqual(
        expected.map((a) => shape(a.replace(benignModel, c.model))),
      );
    });
  });

  it('every bundle writes back each file exactly', () => {
    const driver = join(ROOT, 'bundles.sh');
    writeFileSync(
      driver,
      `${cases.map((c) => `sh ${q(join(c.dir, 'bundle.sh'))} ${q(join(c.dir, 'unpacked'))} > /dev/null`).join('\n')}\n`,
    );
    const r = spawnSync('sh', ['-e', driver], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    for (const c of cases)
      for (const f of c.e.files) expect(readFileSync(join(c.dir, 'unpacked', f.path), 'utf8'), f.path).toBe(f.text);
  });

  it('every JSON file parses and holds the config as given; each text of several lines is its own file, exactly', () => {
    let jsonFiles = 0;
    for (const c of cases) {
      for (const f of c.e.files.filter((x) => x.path.endsWith('.jsonl'))) {
        for (const line of f.text.split('\n').slice(0, -1)) JSON.parse(line);
        jsonFiles++;
      }
      expect(JSON.parse(readFileSync(join(c.dir, CONFIG_FILE), 'utf8'))).toEqual({ preset: 'grpo', ...c.config });
      jsonFiles++;
      const entry = c.e.files.find((f) => f.path === c.e.entry)!.text;
      for (const field of c.fields) {
        const file = field === MODEL_FIELD ? null : valueFileOf(field as RLField);
        if (!file) continue;
        const value = textOf(field, c.s);
        expect(readFileSync(join(c.dir, file), 'utf8')).toBe(value);
        expect(entry).toContain(`# ${field} = (${value.length} characters, in ${file})`);
        // Never inlined raw (with a line break: one-line literals of other fields escape it).
        if (value.includes('\n') && value.length >= 8)
          for (const f of c.e.files.filter((x) => x.path !== file && x.path !== CONFIG_FILE))
            expect(f.text.includes(value), `${f.path} inlines ${field}`).toBe(false);
      }
      if (c.fields.includes('prompts')) {
        const given = parsePromptList(textOf('prompts', c.s)).map((it) => it.prompt);
        const rows = c.e.files
          .filter((f) => f.path.startsWith('data/'))
          .flatMap((f) => f.text.split('\n').slice(0, -1))
          .map((l) => JSON.parse(l) as { prompt: unknown; extra_info?: { prompt: string } });
        for (const r of rows) expect(given).toContain(r.extra_info?.prompt ?? r.prompt);
      }
    }
    console.log(`export quoting: ${jsonFiles} JSON files parsed`);
  });

  it.skipIf(!HAS_PYTHON)(
    'every Python file compiles, and each literal (comments, README, the TRL --model default) reads back as the value given',
    () => {
      const py = cases.flatMap((c) => c.e.files.filter((f) => f.path.endsWith('.py')).map((f) => join(c.dir, f.path)));
      const oneLine = cases.flatMap((c) =>
        c.fields
          .filter((f) => f !== MODEL_FIELD && valueFileOf(f as RLField) === null)
          .flatMap((field) => [c.e.entry, 'README.md'].map((path) => ({ c, field, path }))),
      );
      const literals = oneLine.map(({ c, field, path }) => commentLiteral(c, field, path));
      const trl = cases.filter((c) => c.target === 'trl');
      const out = runPython(
        py,
        literals,
        trl.map((c) => join(c.dir, 'train_trl.py')),
      );
      console.log(
        `export quoting: ${py.length} Python files compiled, ${literals.length} comment literals and ${trl.length} --model defaults read back`,
      );
      expect(out.errors).toEqual([]);
      oneLine.forEach(({ c, field, path }, i) => expect(out.literals[i], `${field} in ${path}`).toBe(c.s));
      trl.forEach((c, i) => expect(out.defaults[i]).toBe(c.model));
    },
  );
  if (!HAS_PYTHON)
    console.warn('export quoting: python3 not found, the py_compile and literal read-back checks are skipped');

  it('no script, module or README holds a raw control character, and the marker was never created', () => {
    for (const c of cases)
      for (const f of c.e.files.filter((x) => /\.(sh|py|md)$/.test(x.path)))
        expect(/(?![\t\n])[\p{Cc}\u2028\u2029]/u.test(f.text), `${c.target} ${f.path}`).toBe(false);
    expect(existsSync(MARK)).toBe(false);
  });
});

describe('the quoting helpers', () => {
  it('write each target language as documented', () => {
    expect(shellQuote('f', "it's $(x) `y` \\n")).toBe("'it'\\''s $(x) `y` \\n'");
    expect(() => shellQuote('f', 'a\0b')).toThrow(/^f: has a NUL character \(at 1\)/);
    expect(() => shellQuote('f', 'a\ud800')).toThrow(/^f: has an unpaired UTF-16 surrogate \(at 1\)/);
    expect(shellWord('f', '--actor.eps_clip_low_high')).toBe('--actor.eps_clip_low_high');
    expect(shellWord('f', 'a b')).toBe("'a b'");
    expect(pyString('a"\\\n\r\t\0\u2028\u202e\ud800é🙂')).toBe('"a\\"\\\\\\n\\r\\t\\x00\\u2028\\u202e\\ud800é🙂"');
    expect(pyString('|`', '|`')).toBe('"\\x7c\\x60"');
    expect(commentText('plain text, kept')).toBe('plain text, kept');
    expect(commentText('two\nlines')).toBe('two\\nlines');
    expect(checkModelName('hf-model', 'Qwen/Qwen2.5-0.5B')).toBe('Qwen/Qwen2.5-0.5B');
    for (const bad of ['', '-rf', 'a b', 'org/my"model', '$(x)', 'x'.repeat(1025)])
      expect(() => checkModelName('hf-model', bad), JSON.stringify(bad)).toThrow(/^hf-model: /);
  });
});
