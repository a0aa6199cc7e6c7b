// The CLI's files (files.ts): every fs error names its path and a plain reason; an atomic write that fails
// leaves the old files whole and no temporaries; a checkpoint with non-finite weights or a tokenizer larger than
// the model's vocab_size is refused (what `generate` and `train` load), naming the tensor or both numbers.

import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeCheckpoint, encodeCheckpoint } from '../io/checkpoint';
import { EXIT, exitCodeOf } from './args';
import {
  FileError,
  PUBLIC_DIR,
  loadCheckpointDir,
  onFile,
  readFileOrFail,
  writeFileAtomic,
  writeFilesAtomic,
} from './files';

const WARM = fileURLToPath(new URL('checkpoints/copy', PUBLIC_DIR));
const scratch = () => mkdtempSync(join(tmpdir(), 'rl-lab-files-'));

const thrown = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a throw');
};

const rejected = async (p: Promise<unknown>): Promise<Error> => {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
};

describe('file errors', () => {
  it('name the path and a plain reason: ENOENT, EISDIR, ENOTDIR', () => {
    const dir = scratch();
    expect(thrown(() => readFileOrFail(join(dir, 'nope.json'))).message).toBe(
      `${join(dir, 'nope.json')}: cannot read it: no such file or directory`,
    );
    expect(thrown(() => readFileOrFail(dir)).message).toBe(`${dir}: cannot read it: is a directory, not a file`);
    writeFileSync(join(dir, 'f'), 'x');
    expect(thrown(() => writeFileAtomic(join(dir, 'f', 'g'), 'y')).message).toMatch(
      new RegExp(
        `^${join(dir, 'f', 'g')}: cannot write it \\(through \\.g\\.tmp-\\d+\\): a part of the path is a file, not a directory; nothing was replaced`,
      ),
    );
  });

  it('no space left on the device is said, with the path (ENOSPC)', () => {
    // /dev/full fails every write with ENOSPC: a real one, through the wrapper every write of the CLI goes through.
    const e = thrown(() => onFile('/dev/full', 'write it', () => writeFileSync('/dev/full', 'x')));
    expect(e).toBeInstanceOf(FileError);
    expect(e.message).toBe('/dev/full: cannot write it: no space left on the device');
    expect(exitCodeOf(e)).toBe(EXIT.failed);
  });

  it('an unreadable input is refused input (exit 2); a failed write is a failure (exit 1)', () => {
    const dir = scratch();
    expect(exitCodeOf(thrown(() => readFileOrFail(join(dir, 'missing'))))).toBe(EXIT.usage);
    expect(exitCodeOf(thrown(() => writeFileAtomic(join(dir, 'no', 'such', 'dir'), 'x')))).toBe(EXIT.failed);
  });
});

describe('atomic writes', () => {
  it('replace files whole and leave no temporaries', () => {
    const dir = scratch();
    writeFileAtomic(join(dir, 'a'), 'old');
    writeFilesAtomic([
      [join(dir, 'a'), 'new a'],
      [join(dir, 'b'), new Uint8Array([1, 2, 3])],
    ]);
    expect(readFileSync(join(dir, 'a'), 'utf8')).toBe('new a');
    expect([...readFileSync(join(dir, 'b'))]).toEqual([1, 2, 3]);
    expect(readdirSync(dir).sort()).toEqual(['a', 'b']);
  });

  it('a write that fails part way leaves every old file as it was and removes the temporaries', () => {
    const dir = scratch();
    writeFileAtomic(join(dir, 'model'), 'model at step 5');
    writeFileAtomic(join(dir, 'state'), 'state at step 5');
    // The third file's directory does not exist: its temporary cannot be written, so nothing is renamed.
    const e = thrown(() =>
      writeFilesAtomic([
        [join(dir, 'model'), 'model at step 10'],
        [join(dir, 'state'), 'state at step 10'],
        [join(dir, 'gone', 'x'), 'x'],
      ]),
    );
    expect(e.message).toMatch(
      /gone\/x: cannot write it \(through \.x\.tmp-\d+\): no such file or directory; nothing was replaced: the files there are as they were$/,
    );
    expect(readFileSync(join(dir, 'model'), 'utf8')).toBe('model at step 5');
    expect(readFileSync(join(dir, 'state'), 'utf8')).toBe('state at step 5');
    expect(readdirSync(dir).sort()).toEqual(['model', 'state']);
  });

  it('a read-only directory is named (EACCES/EROFS) unless running as root', () => {
    const dir = scratch();
    chmodSync(dir, 0o500);
    const root = process.getuid?.() === 0;
    if (root) expect(() => writeFileAtomic(join(dir, 'a'), 'x')).not.toThrow();
    else
      expect(thrown(() => writeFileAtomic(join(dir, 'a'), 'x')).message).toMatch(
        new RegExp(`^${dir}/a: cannot write it \\(through \\.a\\.tmp-\\d+\\): permission denied`),
      );
    chmodSync(dir, 0o700);
  });
});

describe('checkpoints that cannot be used', () => {
  /** The shipped copy warm start, copied, with `edit` applied to its files. */
  function editedWarmStart(edit: (dir: string) => void): string {
    const dir = join(scratch(), 'ck');
    cpSync(WARM, dir, { recursive: true });
    edit(dir);
    return dir;
  }

  it('loads the shipped warm start', async () => {
    expect((await loadCheckpointDir(WARM)).ck.config.vocabSize).toBe(99);
  });

  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
  ])('refuses a weight of %s, naming the tensor and index', async (_name, value) => {
    const dir = editedWarmStart((d) => {
      const ck = decodeCheckpoint(
        new Uint8Array(readFileSync(join(d, 'model.safetensors'))),
        readFileSync(join(d, 'config.json'), 'utf8'),
      );
      ck.params['model.layers.1.mlp.up_proj.weight'][17] = value;
      writeFileSync(join(d, 'model.safetensors'), encodeCheckpoint(ck).safetensors);
    });
    const e = await rejected(loadCheckpointDir(dir));
    expect(e.message).toBe(
      `checkpoint ${dir}: model.safetensors: tensor model.layers.1.mlp.up_proj.weight holds ${value} at index 17 (the weights must be finite)`,
    );
    expect(exitCodeOf(e)).toBe(EXIT.usage);
  });

  it("refuses a tokenizer larger than the model's vocab_size, saying both numbers", async () => {
    const dir = editedWarmStart((d) => {
      const tok = JSON.parse(readFileSync(join(d, 'tokenizer.json'), 'utf8')) as {
        model: { vocab: Record<string, number> };
      };
      [...'éßüøλ'].forEach((ch, i) => (tok.model.vocab[ch] = 99 + i));
      writeFileSync(join(d, 'tokenizer.json'), JSON.stringify(tok));
    });
    expect((await rejected(loadCheckpointDir(dir))).message).toMatch(
      /tokenizer\.json: the tokenizer's ids reach 103 \(token "λ"\) but the model's vocab_size is 99/,
    );
  });

  it('a missing directory is named as given; a missing file by its path', async () => {
    expect((await rejected(loadCheckpointDir('/no/such/checkpoint'))).message).toMatch(
      /^\/no\/such\/checkpoint: cannot read the checkpoint directory: no such file or directory/,
    );
    const dir = editedWarmStart((d) => writeFileSync(join(d, 'config.json'), '{'));
    expect((await rejected(loadCheckpointDir(dir))).message).toMatch(
      new RegExp(`^checkpoint ${dir}: config.json is not valid JSON`),
    );
    const noModel = scratch();
    expect(existsSync(join(noModel, 'model.safetensors'))).toBe(false);
    expect((await rejected(loadCheckpointDir(noModel))).message).toMatch(
      new RegExp(`^${noModel}/model.safetensors: cannot read it: no such file or directory`),
    );
  });
});

describe('a Hugging Face folder whose tokenizer the model cannot take', () => {
  const QWEN = fileURLToPath(new URL('models/tiny-qwen2', PUBLIC_DIR));
  /** A copy of tiny-qwen2 (vocab_size 560) with its JSON files edited. */
  function editedQwen(edit: (json: Record<string, Record<string, unknown>>) => void): string {
    const dir = join(scratch(), 'qwen');
    cpSync(QWEN, dir, { recursive: true });
    const names = ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json'];
    const json = Object.fromEntries(names.map((n) => [n, JSON.parse(readFileSync(join(dir, n), 'utf8'))]));
    edit(json);
    for (const n of names) writeFileSync(join(dir, n), JSON.stringify(json[n]));
    return dir;
  }

  it('refuses ids at or past vocab_size by the largest id, not the count, naming the id and a special one', async () => {
    // The vocabulary's last entry ("fdb") moves from id 555 to 5000, and tokenizer_config and generation_config name
    // it the end of sequence: still 559 tokens, fewer than 560. (Added tokens keep their ids: tokenizers numbers them after the
    // 556 entries of the vocabulary, as the file does.)
    const dir = editedQwen((j) => {
      const model = j['tokenizer.json'].model as { vocab: Record<string, number> };
      model.vocab.fdb = 5000;
      j['tokenizer_config.json'].eos_token = 'fdb';
      j['generation_config.json'].eos_token_id = [5000, 556];
    });
    const e = await rejected(loadCheckpointDir(dir));
    expect(e.message).toBe(
      `checkpoint ${dir}: tokenizer.json: the tokenizer's ids reach 5000 (token "fdb") but the model's vocab_size is 560 (every token id must be below vocab_size; the end-of-sequence id 5000 is not)`,
    );
    expect(exitCodeOf(e)).toBe(EXIT.usage);
  });

  it.each([
    [
      'a loop of 10^8 steps',
      '{% for i in range(100000000) %}x{% endfor %}',
      /asks for range\(\) of 100,000,000 numbers/,
    ],
    [
      'nested loops of 10^8 steps',
      '{% for i in range(10000) %}{% for j in range(10000) %}x{% endfor %}{% endfor %}',
      /runs too long/,
    ],
    [
      'a text doubled 40 times',
      '{% set ns = namespace(s="xxxxxxxx") %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}',
      /makes too much text/,
    ],
  ])('bounds the chat template: %s is refused on load, naming chat_template', async (_, template, why) => {
    const dir = editedQwen((j) => {
      j['tokenizer_config.json'].chat_template = template;
    });
    const e = await rejected(loadCheckpointDir(dir));
    expect(e.message).toMatch(new RegExp(`^checkpoint ${dir}: tokenizer_config.json chat_template `));
    expect(e.message).toMatch(why);
    expect(exitCodeOf(e)).toBe(EXIT.usage);
  });

  it('renders an ordinary chat template as before', async () => {
    const { tok } = await loadCheckpointDir(QWEN);
    expect(tok.applyChatTemplate?.('2+2=')).toBe('<|im_start|>user\n2+2=<|im_end|>\n<|im_start|>assistant\n');
  });
});
