// Tests for the character tokenizer (pure TS) and the pretrained path (Hugging Face JS tokenizers, both backends):
// the shipped file, round trips, identical ids between implementations, unknown characters, special ids.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  buildCharTokenizerJson,
  loadCharTokenizer,
  loadPretrainedTokenizer,
  TokenizerError,
  type Tokenizer,
} from './tokenizer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const charJsonText = readFileSync(`${root}public/tokenizers/char/tokenizer.json`, 'utf8');
const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

/** Small deterministic PRNG (mulberry32) so the random strings are the same on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Strings that stress the tokenizers: printable ASCII, special-token fragments, non-ASCII, controls. */
function randomStrings(n: number, seed: number): string[] {
  const r = rng(seed);
  const pieces = [
    ...PRINTABLE,
    '<eos>',
    '<bos>',
    '<pad>',
    '<unk>',
    '<eo',
    'os>',
    '<',
    '>',
    'é',
    '😀',
    '\n',
    '\t',
    '中',
    ' .',
    "'s",
  ];
  const out: string[] = ['', ' ', '<eos><eos>', '<<eos>>', '<bos<eos>', 'a\u0000b', '\ud800x'];
  for (let i = 0; i < n; i++) {
    const len = Math.floor(r() * 40);
    let s = '';
    for (let j = 0; j < len; j++) {
      // Mostly printable ASCII, sometimes one of the awkward pieces.
      s += r() < 0.85 ? PRINTABLE[Math.floor(r() * PRINTABLE.length)] : pieces[Math.floor(r() * pieces.length)];
    }
    out.push(s);
  }
  return out;
}

describe('char tokenizer.json', () => {
  it('the shipped file is exactly what buildCharTokenizerJson writes (regenerate with scripts/make-char-tokenizer.ts)', () => {
    expect(JSON.parse(charJsonText)).toEqual(buildCharTokenizerJson());
  });

  it('has <pad>=0 <bos>=1 <eos>=2 <unk>=3, then printable ASCII 32..126 at ids 4..98', () => {
    const t = loadCharTokenizer(charJsonText);
    expect([t.padId, t.bosId, t.eosId, t.unkId]).toEqual([0, 1, 2, 3]);
    expect(t.vocabSize).toBe(99);
    expect(t.encode(' ~')).toEqual([4, 98]);
    expect(t.tokenString(4 + 'A'.charCodeAt(0) - 32)).toBe('A');
    expect([...t.specialIds].sort()).toEqual([0, 1, 2, 3]);
  });
});

describe('loadCharTokenizer (pure TS)', () => {
  const t = loadCharTokenizer(JSON.parse(charJsonText) as object);

  it('round-trips every printable character, one id per character', () => {
    const ids = t.encode(PRINTABLE);
    expect(ids).toEqual(Array.from({ length: 95 }, (_, i) => 4 + i));
    expect(t.decode(ids)).toBe(PRINTABLE);
    for (const ch of PRINTABLE) expect(t.decode(t.encode(ch))).toBe(ch);
    expect(t.decode(new Int32Array(ids))).toBe(PRINTABLE);
  });

  it('maps unknown characters to <unk>, one per code point', () => {
    expect(t.encode('aé\n😀b')).toEqual([t.encode('a')[0], 3, 3, 3, t.encode('b')[0]]);
    expect(t.decode(t.encode('aé'))).toBe('a<unk>');
  });

  it('matches literal special-token text as HF does, and decodes specials as text unless skipped', () => {
    expect(t.encode('<eos>')).toEqual([2]);
    expect(t.encode('x<bos>y')).toEqual([t.encode('x')[0], 1, t.encode('y')[0]]);
    expect(t.encode('<eo')).toHaveLength(3);
    expect(t.decode([1, ...t.encode('hi'), 2, 0, 0])).toBe('<bos>hi<eos><pad><pad>');
    expect(t.decode([1, ...t.encode('hi'), 2, 0, 3], { skipSpecialTokens: true })).toBe('hi');
  });

  it('decodes ids beyond the vocabulary (a padded embedding table) as <unk>', () => {
    expect(t.decode([t.encode('a')[0], 127])).toBe('a<unk>');
    expect(t.tokenString(500)).toBe('<unk>');
    expect(() => t.decode([1.5])).toThrow(TokenizerError);
  });

  it('rejects files it cannot reproduce exactly', () => {
    const withMerges = {
      ...buildCharTokenizerJson(),
      model: { ...buildCharTokenizerJson().model, merges: [['a', 'b']] },
    };
    expect(() => loadCharTokenizer(withMerges)).toThrow(/model.merges is not an empty list.*loadPretrainedTokenizer/);
    const withPre = { ...buildCharTokenizerJson(), pre_tokenizer: { type: 'ByteLevel' } };
    expect(() => loadCharTokenizer(withPre)).toThrow(/"pre_tokenizer" is "ByteLevel"/);
    const noBos = buildCharTokenizerJson();
    noBos.added_tokens[1].content = '<s>';
    noBos.model.vocab['<s>'] = 1;
    delete noBos.model.vocab['<bos>'];
    expect(() => loadCharTokenizer(noBos)).toThrow(/no <bos> token/);
    expect(() => loadCharTokenizer('{nope')).toThrow(/not valid JSON/);
  });
});

describe('loadPretrainedTokenizer (Hugging Face JS tokenizers)', () => {
  it('never imports Hugging Face libraries statically (the page must not load them at startup)', () => {
    const src = readFileSync(fileURLToPath(new URL('./tokenizer.ts', import.meta.url)), 'utf8');
    expect(src).not.toMatch(/^\s*import\s[^(]*from\s+['"]@huggingface\//m);
    expect(src).toMatch(/await import\('@huggingface\/tokenizers'\)/);
    expect(src).toMatch(/await import\('@huggingface\/transformers'\)/);
  });

  const strings = randomStrings(3000, 1234);
  const pure = loadCharTokenizer(charJsonText);

  for (const backend of ['tokenizers', 'transformers'] as const) {
    describe(`backend ${backend}`, () => {
      // Loaded once, by whichever test runs first: each test awaits it, so none depends on the tests' order.
      let loading: Promise<Tokenizer> | undefined;
      const loaded = () => (loading ??= loadPretrainedTokenizer(charJsonText, undefined, { backend }));
      it('loads the char tokenizer.json with the same special ids and size', async () => {
        const hf = await loaded();
        expect(hf.kind).toBe('pretrained');
        expect([hf.padId, hf.bosId, hf.eosId, hf.unkId, hf.vocabSize]).toEqual([0, 1, 2, 3, 99]);
        expect([...hf.specialIds].sort()).toEqual([0, 1, 2, 3]);
      });

      it('round-trips every printable character', async () => {
        const hf = await loaded();
        const ids = hf.encode(PRINTABLE);
        expect(ids).toEqual(pure.encode(PRINTABLE));
        expect(hf.decode(ids)).toBe(PRINTABLE);
        for (let i = 0; i < PRINTABLE.length; i++) expect(hf.tokenString(4 + i)).toBe(PRINTABLE[i]);
        // tokenizers.js would apply clean_up_tokenization_spaces by default; we must not.
        expect(hf.decode(hf.encode("a . b , c ' d n't"))).toBe("a . b , c ' d n't");
      });

      it(`gives identical ids and decodes to the pure-TS tokenizer on ${strings.length} strings`, async () => {
        const hf = await loaded();
        for (const s of strings) {
          const ids = hf.encode(s);
          expect(ids, JSON.stringify(s)).toEqual(pure.encode(s));
          expect(hf.decode(ids)).toBe(pure.decode(ids));
          expect(hf.decode(ids, { skipSpecialTokens: true })).toBe(pure.decode(ids, { skipSpecialTokens: true }));
        }
        expect(hf.decode([])).toBe('');
        expect(hf.decode([5, 120])).toBe(pure.decode([5, 120]));
      });

      it('maps unknown characters to <unk>', async () => {
        const hf = await loaded();
        expect(hf.encode('é😀')).toEqual([3, 3]);
      });
    });
  }

  it('loads a byte-level BPE tokenizer.json (GPT-2/SmolLM2 style) with ids from tokenizer_config.json', async () => {
    const { json, config } = tinyByteLevelBpe();
    for (const backend of ['tokenizers', 'transformers'] as const) {
      const t = await loadPretrainedTokenizer(json, config, { backend });
      expect([t.bosId, t.eosId, t.padId]).toEqual([0, 0, 0]);
      const ids = t.encode('hello hello, wörld!');
      expect(ids.length).toBeLessThan('hello hello, wörld!'.length); // the merges applied
      expect(ids).toContain(json.model.vocab['Ġhello']);
      expect(t.decode(ids)).toBe('hello hello, wörld!');
      expect(t.tokenString(json.model.vocab['Ġhello'])).toBe('Ġhello');
      expect(t.decode([0, ...ids, 0], { skipSpecialTokens: true })).toBe('hello hello, wörld!');
    }
  });

  it('says so when it cannot tell which token ends a sequence, or the config names a missing token', async () => {
    const { json } = tinyByteLevelBpe();
    const { '<|endoftext|>': _dropped, ...vocab } = json.model.vocab;
    const noSpecial = {
      ...json,
      added_tokens: [],
      model: { ...json.model, vocab: { ...vocab, '<|weird|>': _dropped } },
    };
    await expect(loadPretrainedTokenizer(noSpecial)).rejects.toThrow(/eos_token/);
    await expect(loadPretrainedTokenizer(json, { eos_token: '<nope>' })).rejects.toThrow(
      /"<nope>" is not in the vocabulary/,
    );
    await expect(loadPretrainedTokenizer({ model: { type: 'Mystery' } })).rejects.toThrow(TokenizerError);
  });
});

describe('the chat template bound', () => {
  const withTemplate = (chat_template: string) => {
    const { json, config } = tinyByteLevelBpe();
    return loadPretrainedTokenizer(json, { ...config, chat_template });
  };

  it('counts every loop iteration: empty nested loops are refused on load, in seconds', async () => {
    const t0 = performance.now();
    await expect(
      withTemplate('{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}'),
    ).rejects.toThrow(/^tokenizer_config\.json chat_template runs too long \(a render may take 100,000 steps/);
    console.log(`empty nested loops: refused after ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  });

  it('counts every character a block outputs, even text the render throws away', async () => {
    // A text of 4,096 characters, then 2,000 blocks that each output it into a variable that is dropped: no single
    // value is large, the render outputs nothing, and the blocks make 8 million characters.
    await expect(
      withTemplate(
        '{% set ns = namespace(s="yyyyyyyy") %}{% for i in range(9) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}' +
          '{% for i in range(2000) %}{% set x %}{{ ns.s }}{% endset %}{% endfor %}',
      ),
    ).rejects.toThrow(/^tokenizer_config\.json chat_template makes too much text/);
  });

  it('renders an ordinary template with loops as before', async () => {
    const t = await withTemplate(
      '{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}',
    );
    expect(t.applyChatTemplate?.('hi')).toBe('<user>hi<assistant>');
  });
});

/** GPT-2's byte -> printable-unicode table (bytes_to_unicode). */
function bytesToUnicode(): string[] {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const table: string[] = [];
  bs.forEach((b, i) => (table[b] = String.fromCharCode(cs[i])));
  return table;
}

/** A tiny byte-level BPE tokenizer.json in the format GPT-2, SmolLM2 and Llama 3 use. */
function tinyByteLevelBpe() {
  const vocab: Record<string, number> = { '<|endoftext|>': 0 };
  for (const ch of bytesToUnicode()) vocab[ch] = Object.keys(vocab).length;
  const merges: [string, string][] = [
    ['h', 'e'],
    ['l', 'l'],
    ['he', 'll'],
    ['hell', 'o'],
    ['Ġ', 'hello'],
  ];
  for (const [a, b] of merges) vocab[a + b] = Object.keys(vocab).length;
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      {
        id: 0,
        content: '<|endoftext|>',
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      },
    ],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
  const config = {
    bos_token: '<|endoftext|>',
    eos_token: '<|endoftext|>',
    unk_token: '<|endoftext|>',
    clean_up_tokenization_spaces: false,
  };
  return { json, config };
}
