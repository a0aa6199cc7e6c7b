// The lab's tokenizer loader against Hugging Face tokenizers (the Rust library transformers uses), from a fixture
// it wrote once (scripts/make-tokenizer-parity-fixture.py; src/io/fixtures/tokenizers-parity.json): the shipped
// tokenizer.json files and seeded broken variants of them (a merge inserted, a vocabulary entry dropped, an added
// token's id changed). Properties: every file tokenizers refuses, the lab refuses too; every file the lab accepts,
// tokenizers accepts and encodes every text to the same ids; the lab refuses a file tokenizers accepts only when
// tokenizers numbers its added tokens otherwise than the file does. Then the case, by hand: merges that name
// tokens not in the vocabulary are refused naming the first one, where the JS library alone would drop "copy".

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadPretrainedTokenizer, TokenizerError } from './tokenizer';

type Mutation =
  | { op: 'insert_merge'; at: number; merge: string }
  | { op: 'drop_vocab'; token: string }
  | { op: 'added_id'; index: number; id: number };

interface ParityCase {
  base: string;
  mutation: Mutation | null;
  texts: string[];
  /** tokenizers' refusal, or null when it read the file. */
  error: string | null;
  /** Added token content -> the id tokenizers gave it. */
  added?: Record<string, number>;
  ids?: number[][];
}

const root = new URL('../../', import.meta.url);
const fixture = JSON.parse(readFileSync(new URL('src/io/fixtures/tokenizers-parity.json', root), 'utf8')) as {
  tokenizers: string;
  cases: ParityCase[];
};

interface TokenizerFile {
  added_tokens: { id: number; content: string }[];
  model: { vocab: Record<string, number>; merges: (string | string[])[] };
}

/** The base file with the case's mutation, applied as the fixture's script applies it. */
function mutated(c: ParityCase): TokenizerFile {
  const j = JSON.parse(readFileSync(new URL(c.base, root), 'utf8')) as TokenizerFile;
  const m = c.mutation;
  if (m?.op === 'insert_merge') {
    const merges = j.model.merges;
    merges.splice(m.at, 0, merges.length === 0 || typeof merges[0] === 'string' ? m.merge : m.merge.split(' '));
  } else if (m?.op === 'drop_vocab') delete j.model.vocab[m.token];
  else if (m?.op === 'added_id') j.added_tokens[m.index].id = m.id;
  return j;
}

/** What the lab makes of a file: its tokenizer, or its refusal. Each case names its end-of-sequence token. */
async function labLoad(j: TokenizerFile) {
  const eos = j.added_tokens[0]?.content;
  try {
    return { tokenizer: await loadPretrainedTokenizer(j, eos === undefined ? {} : { eos_token: eos }), error: null };
  } catch (e) {
    if (!(e instanceof TokenizerError)) throw e;
    return { tokenizer: null, error: e.message };
  }
}

describe(`tokenizer.json files against Hugging Face tokenizers ${fixture.tokenizers}`, () => {
  it('the fixture holds accepted and refused files of each kind', () => {
    expect(fixture.cases.filter((c) => c.error === null).length).toBeGreaterThan(20);
    expect(fixture.cases.filter((c) => c.error !== null).length).toBeGreaterThan(20);
    for (const op of ['insert_merge', 'drop_vocab', 'added_id'])
      expect(fixture.cases.some((c) => c.mutation?.op === op)).toBe(true);
  });

  it.each(
    fixture.cases.map((c) => [`${c.base} ${c.mutation ? JSON.stringify(c.mutation) : 'as shipped'}`, c] as const),
  )('%s', async (_, c) => {
    const lab = await labLoad(mutated(c));
    if (c.error !== null) {
      // tokenizers refuses it: so does the lab.
      expect(lab.error, `tokenizers refused it (${c.error})`).not.toBeNull();
      return;
    }
    if (lab.tokenizer === null) {
      // The lab refuses a file tokenizers reads only when tokenizers numbers an added token otherwise than the file.
      const file = mutated(c).added_tokens;
      expect(
        file.some((a) => c.added?.[a.content] !== a.id),
        `the lab refused a file tokenizers reads as written: ${lab.error}`,
      ).toBe(true);
      expect(lab.error).toMatch(/^tokenizer\.json added_tokens\[\d+\] /);
      return;
    }
    // Both read it: the same ids on every text.
    expect(c.texts.map((t) => lab.tokenizer.encode(t))).toEqual(c.ids);
  });

  it('every shipped file is accepted', () => {
    const shipped = fixture.cases.filter((c) => c.mutation === null);
    expect(shipped.length).toBeGreaterThanOrEqual(5);
    expect(shipped.every((c) => c.error === null)).toBe(true);
  });
});

describe('merges naming tokens outside the vocabulary', () => {
  const llama = () =>
    JSON.parse(readFileSync(new URL('public/models/tiny-llama/tokenizer.json', root), 'utf8')) as TokenizerFile;

  it("are refused naming the first bad merge, instead of encoding 'copy: abc' without 'copy'", async () => {
    const j = llama();
    const at = j.model.merges.findIndex((m) => (typeof m === 'string' ? m : m.join(' ')) === 'c o');
    expect(at).toBeGreaterThanOrEqual(0);
    delete j.model.vocab.co;
    await expect(loadPretrainedTokenizer(j, { eos_token: '</s>' })).rejects.toThrow(
      `tokenizer.json model.merges[${at}] ("c o"): the token "co" is not in model.vocab; Hugging Face tokenizers refuses or reads this file otherwise, so it is not used`,
    );
  });

  it('a merge of three parts is refused, as tokenizers refuses it', async () => {
    const j = llama();
    j.model.merges.unshift('a b c');
    await expect(loadPretrainedTokenizer(j, { eos_token: '</s>' })).rejects.toThrow(
      'tokenizer.json model.merges[0] ("a b c") is not two tokens',
    );
  });

  it("an added token at another id than tokenizers gives it is refused naming tokenizers' id", async () => {
    const j = llama();
    const eos = j.added_tokens.findIndex((a) => a.content === '</s>');
    j.added_tokens[eos].id = 5000;
    await expect(loadPretrainedTokenizer(j, { eos_token: '</s>' })).rejects.toThrow(
      `tokenizer.json added_tokens[${eos}] ("</s>") has id 5000, but it is id 2 in model.vocab`,
    );
  });

  it('a post-processor special token at ids that are not its tokens is refused', async () => {
    const j = llama() as TokenizerFile & { post_processor: { special_tokens: Record<string, { ids: number[] }> } };
    j.post_processor.special_tokens['<s>'].ids = [7];
    await expect(loadPretrainedTokenizer(j, { eos_token: '</s>' })).rejects.toThrow(
      'tokenizer.json post_processor special token "<s>": "<s>" is id 1, not 7',
    );
  });

  it('an unk_token tokenizer_config.json names outside the vocabulary is refused', async () => {
    await expect(loadPretrainedTokenizer(llama(), { eos_token: '</s>', unk_token: '<nope>' })).rejects.toThrow(
      'tokenizer_config.json unk_token "<nope>" is not in the vocabulary',
    );
  });
});
