// Hugging Face folders end to end, with no hub: the two shipped tiny checkpoints (public/models/tiny-llama, untied
// Llama; public/models/tiny-qwen2, tied Qwen2 with q/k/v biases) are what src/io/tiny-hf.ts builds, load through
// loadHfFolder (and sharded), tokenize exactly as transformers.js' own AutoTokenizer does from the same local files,
// decode greedily on the GPU to the CPU reference's tokens, get the reference's bias gradients on the GPU, and take
// a GRPO step with a finite loss. Malformed folders are refused naming the file and the problem.

import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { crossEntropyBackward, crossEntropyForward } from '../kernels/cross-entropy';
import { crossEntropyBackward as crossEntropyBackwardTwin } from '../reference/cross-entropy';
import { modelBackward, modelForward } from '../reference/model';
import { paramShapes } from '../core/model-shapes';
import { host } from '../core/host-tensor';
import { PUBLIC_ASSETS } from '../engine/node-assets';
import { loadStartPolicy } from '../engine/start-policy';
import { resolveConfig } from '../schema/config';
import { encodePrompt } from '../rl/learners/sft';
import { Trainer } from '../rl/algorithm/trainer';
import { taskCorpus } from '../tasks/corpus';
import { writeSafetensors } from './safetensors';
import { GpuModel } from '../model/gpu-model';
import { loadHfFolder, SHARD_INDEX_FILE, type FolderReader, type HfFolder } from './hf-folder';
import { CpuPolicy, GpuPolicy } from '../model/policy';
import { buildTinyHfFolders } from './tiny-hf';
import { readSafetensors } from './safetensors';
import { parityError } from '../reference/fixture';

const MODELS = fileURLToPath(new URL('../../public/models/', import.meta.url));
const NAMES = ['tiny-llama', 'tiny-qwen2'] as const;

function fsReader(dir: string): FolderReader {
  return {
    bytes: async (name) => new Uint8Array(readFileSync(join(dir, name))),
    text: async (name) => readFileSync(join(dir, name), 'utf8'),
  };
}

const folders = {} as Record<(typeof NAMES)[number], HfFolder>;
for (const name of NAMES) folders[name] = await loadHfFolder(fsReader(join(MODELS, name)));

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

/** Strings the tokenizers must agree on: every task's prompts and answers, and text no task writes. */
const STRINGS = [
  ...taskCorpus(1, 3).slice(0, 120),
  '',
  ' ',
  'copy:abc= and  two  spaces\tthen a tab\nand a newline\n\n',
  'héllo wörld, naïve café',
  'e\u0301 (e + combining acute), \u00e9 (precomposed)',
  '你好，世界',
  '🤖 robots 👩‍👩‍👧 family (zero-width joiners)',
  'Ελληνικά και русский',
  '<s>literal</s> and <|im_start|>user\nhi<|im_end|>',
  '\u200b\ufeff invisible',
  "it's we're they'll I'd",
];

describe('the shipped tiny folders', () => {
  it('are exactly what `npm run tiny-models` builds (deterministic)', () => {
    const built = buildTinyHfFolders(taskCorpus());
    for (const name of NAMES) {
      for (const [file, data] of Object.entries(built[name])) {
        const committed = readFileSync(join(MODELS, name, file));
        const want = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
        expect(
          committed.equals(want),
          `${name}/${file} differs from the builder's output: run npm run tiny-models`,
        ).toBe(true);
      }
    }
  });

  it('load as a Llama (untied, BOS first) and a Qwen2 (tied, q/k/v biases, no BOS, chat template, padded vocab)', () => {
    const llama = folders['tiny-llama'];
    expect(llama.ck.config.tiedEmbeddings).toBe(false);
    expect(llama.ck.config.qkvBias).toBeUndefined();
    expect(llama.ck.params['lm_head.weight']).toBeDefined();
    expect(llama.tokenizer.kind).toBe('pretrained');
    expect(llama.tokenizer.tokenString(llama.tokenizer.bosId)).toBe('<s>');
    expect(llama.tokenizer.tokenString(llama.tokenizer.eosId)).toBe('</s>');
    expect(llama.tokenizer.prependsBos).toBe(true);
    expect(llama.tokenizer.applyChatTemplate).toBeNull();
    expect(llama.weightFiles).toEqual(['model.safetensors']);

    const qwen = folders['tiny-qwen2'];
    expect(qwen.ck.config.tiedEmbeddings).toBe(true);
    expect(qwen.ck.config.qkvBias).toBe(true);
    expect(qwen.ck.params['model.layers.1.self_attn.k_proj.bias']).toHaveLength(12);
    expect(qwen.ck.params['model.layers.0.self_attn.o_proj.bias']).toBeUndefined();
    expect(qwen.tokenizer.tokenString(qwen.tokenizer.eosId)).toBe('<|im_end|>');
    expect(qwen.tokenizer.prependsBos).toBe(false);
    expect(qwen.tokenizer.vocabSize).toBeLessThan(qwen.ck.config.vocabSize);
    expect(qwen.tokenizer.applyChatTemplate?.('2+2=')).toBe(
      '<|im_start|>user\n2+2=<|im_end|>\n<|im_start|>assistant\n',
    );
  });
});

describe('as the start of a run (the page and the lessons read the site through loadStartPolicy)', () => {
  it('a checkpoint path on the site loads the folder with its tokenizer files; a missing one is named', async () => {
    const start = await loadStartPolicy(
      resolveConfig('grpo', { task: 'addition', checkpoint: 'models/tiny-qwen2/', chat_template: true }),
      PUBLIC_ASSETS,
    );
    expect(start.init.config).toEqual(folders['tiny-qwen2'].ck.config);
    expect(start.tokenizer.eosId).toBe(folders['tiny-qwen2'].tokenizer.eosId);
    expect(start.tokenizerConfigJson).toBe(readFileSync(join(MODELS, 'tiny-qwen2', 'tokenizer_config.json'), 'utf8'));
    expect(start.source).toBe('warm start models/tiny-qwen2/');
    await expect(
      loadStartPolicy(resolveConfig('grpo', { task: 'addition', checkpoint: 'models/nope' }), PUBLIC_ASSETS),
    ).rejects.toThrow(
      /^checkpoint "models\/nope" \(models\/nope\/\): .*models\/nope\/model.safetensors.* \(nor is there a model.safetensors.index.json listing shards\)/,
    );
  });
});

describe("tokenization equals transformers.js' AutoTokenizer on the same local files", () => {
  it.each(NAMES)('%s: ids (with and without special tokens), decoding and the chat template', async (name) => {
    const tf = await import('@huggingface/transformers');
    tf.env.allowRemoteModels = false; // never a hub request: only these files
    tf.env.allowLocalModels = true;
    tf.env.localModelPath = MODELS;
    const auto = await tf.AutoTokenizer.from_pretrained(name);
    const ours = folders[name].tokenizer;
    for (const s of STRINGS) {
      const want = auto.encode(s, { add_special_tokens: false });
      expect(ours.encode(s), JSON.stringify(s)).toEqual(want);
      // What a prompt becomes: HF's add_special_tokens=True is our BOS rule.
      expect(encodePrompt(ours, s), JSON.stringify(s)).toEqual(s === '' && !ours.prependsBos ? [] : auto.encode(s));
      if (want.length) {
        const decoded = auto.decode(want, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
        expect(ours.decode(want), JSON.stringify(s)).toBe(decoded);
        expect(ours.decode(want, { skipSpecialTokens: true }), JSON.stringify(s)).toBe(
          auto.decode(want, { skip_special_tokens: true, clean_up_tokenization_spaces: false }),
        );
        // Byte-level BPE loses nothing but normalization (Qwen2's NFC).
        expect(decoded).toBe(name === 'tiny-qwen2' ? s.normalize('NFC') : s);
      }
    }
    if (name === 'tiny-qwen2') {
      for (const s of ['copy:abcab=', 'sort:3141=', '你好']) {
        const want = auto.apply_chat_template([{ role: 'user', content: s }], {
          tokenize: false,
          add_generation_prompt: true,
        });
        expect(ours.applyChatTemplate?.(s)).toBe(want);
        expect(encodePrompt(ours, s, true)).toEqual(
          auto.apply_chat_template([{ role: 'user', content: s }], {
            tokenize: true,
            add_generation_prompt: true,
            return_tensor: false,
            return_dict: false,
          }),
        );
      }
    }
  });
});

describe('on the GPU', () => {
  it.each(NAMES)('%s: greedy generation equals the CPU reference token for token', async (name) => {
    const { ck, tokenizer: tok } = folders[name];
    const prompts = ['copy:abcab=', 'addition:12+345=', 'sort:52814=', '你好 🤖'].map((p) => encodePrompt(tok, p));
    const opts = {
      maxNewTokens: 12,
      sampler: { temperature: 1, greedy: true, seed: 0 },
      eosId: tok.eosId,
      padId: tok.padId,
    };
    const gpu = GpuPolicy.create(ctx, ck.config, ck.params, prompts.length);
    const a = await gpu.generate(prompts, opts);
    gpu.destroy();
    const b = await new CpuPolicy(ck.config, ck.params).generate(prompts, opts);
    expect(Array.from(a.tokens)).toEqual(Array.from(b.tokens));
    expect(Array.from(a.lengths)).toEqual(Array.from(b.lengths));
    // Random weights rarely pick EOS, so the rows run the full length: every position was compared.
    expect(Array.from(a.lengths).every((n) => n > 1)).toBe(true);
  });

  it('tiny-qwen2: the cross-entropy gradient of every parameter, the q/k/v biases included, equals the CPU reference', async () => {
    const { ck } = folders['tiny-qwen2'];
    const config = ck.config;
    const B = 2;
    const T = 7;
    const V = config.vocabSize;
    const tokens = Uint32Array.from({ length: B * T }, (_, i) => (i * 37 + 5) % 550);
    const targets = Uint32Array.from({ length: B * T }, (_, i) => (i * 11 + 3) % 550);
    const mask = Float32Array.from({ length: B * T }, (_, i) => (i % 5 === 4 ? 0 : 1));
    // CPU reference in f64.
    const params = Object.fromEntries(
      paramShapes(config).map(({ name, shape }) => [name, host(Float64Array.from(ck.params[name]), shape)]),
    );
    const { logits, cache } = modelForward(config, params, tokens, B, T);
    const dLogits = host(new Float64Array(B * T * V), [B * T, V]);
    crossEntropyBackwardTwin(dLogits, host(logits.data, [B * T, V]), targets, mask);
    const want = modelBackward(config, params, cache, host(dLogits.data, [B, T, V]));
    // The same forward, loss and backward recorded on the GPU.
    const model = GpuModel.create(ctx, config, ck.params, B);
    const u32 = (d: Uint32Array) => ctx.fromArray<'u32'>(d, [d.length], { dtype: 'u32' });
    const inp = { tokens: u32(tokens), positions: u32(Uint32Array.from({ length: B * T }, (_, i) => i % T)) };
    const gTargets = u32(targets);
    const gMask = ctx.fromArray(mask, [B * T]);
    const loss = ctx.tensor([1]);
    const gDLogits = ctx.tensor([B, T, V]);
    const rec = ctx.recorder('qwen2 backward');
    const ws = model.forward(rec, B, T, inp);
    const gLogits = ctx.tensor([B, T, V], { label: 'logits' });
    model.logitsOf(rec, ws, gLogits);
    crossEntropyForward(rec, loss, gLogits.reshape2d(), gTargets, gMask);
    crossEntropyBackward(rec, gDLogits.reshape2d(), gLogits.reshape2d(), gTargets, gMask);
    model.zeroGrads(rec);
    model.headBackwardOf(rec, ws, gDLogits);
    model.backward(rec, ws, inp);
    rec.submit();
    const got = await model.downloadGrads();
    model.destroy();
    expect(Object.keys(got).filter((n) => n.endsWith('.bias'))).toHaveLength(6);
    for (const [name, g] of Object.entries(got)) {
      expect(
        Math.max(...Array.from(want[name].data, Math.abs)),
        `${name}: the reference gradient is not all zero`,
      ).toBeGreaterThan(0);
      expect(parityError(g, want[name].data), name).toBeLessThan(1e-4);
    }
  });

  it.each(NAMES)(
    '%s: one GRPO step of the trainer runs on a task, its loss is finite and every parameter moves',
    async (name) => {
      const { ck, tokenizer } = folders[name];
      const config = resolveConfig('grpo', {
        task: 'addition',
        difficulty: 1,
        train_batch_size: 2,
        num_generations: 4,
        steps: 1,
        eval_every: 0,
        seed: 3,
        max_completion_length: 8,
        chat_template: name === 'tiny-qwen2',
        weight_decay: 0,
        checkpoint: `models/${name}/`,
        // A random model earns the same reward on every completion (zero advantages), so the entropy bonus is what
        // gives every parameter a gradient here.
        entropy_coef: 0.01,
      });
      const trainer = await Trainer.create({
        config,
        init: { config: ck.config, params: ck.params },
        tokenizer,
        backend: { kind: 'webgpu', ctx },
      });
      const records = [];
      for await (const r of trainer.run()) records.push(r);
      const after = (await trainer.exportCheckpoint()).params;
      trainer.destroy();
      expect(records.length).toBeGreaterThan(0);
      for (const r of records) expect(Number.isFinite(r.metrics.loss), `loss ${r.metrics.loss}`).toBe(true);
      expect(Number.isFinite(records[records.length - 1].metrics.grad_norm)).toBe(true);
      // The optimizer updated every tensor, the Qwen2 biases too (AdamW's first step moves each entry by about lr).
      for (const [param, before] of Object.entries(ck.params)) expect(after[param], param).not.toEqual(before);
    },
  );
});

describe('sharded and malformed folders', () => {
  const scratch: string[] = [];
  afterAll(() => {
    for (const d of scratch) rmSync(d, { recursive: true, force: true });
  });
  /** A copy of a shipped folder, edited. */
  function copyOf(name: (typeof NAMES)[number], edit: (dir: string) => void): string {
    const dir = mkdtempSync(join(tmpdir(), 'rl-lab-hf-'));
    scratch.push(dir);
    cpSync(join(MODELS, name), dir, { recursive: true });
    edit(dir);
    return dir;
  }
  /** Splits the folder's model.safetensors into two shards and an index, as save_pretrained(max_shard_size=...) does. */
  function shard(dir: string, indexEdit: (map: Record<string, string>) => void = () => {}): void {
    const file = readSafetensors(new Uint8Array(readFileSync(join(dir, 'model.safetensors'))), { copy: true });
    const names = [...file.tensors.keys()];
    const half = Math.ceil(names.length / 2);
    const weightMap: Record<string, string> = {};
    names.forEach((n, i) => {
      const shardName = `model-0000${i < half ? 1 : 2}-of-00002.safetensors`;
      weightMap[n] = shardName;
    });
    for (const part of ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']) {
      const tensors = new Map(
        names
          .filter((n) => weightMap[n] === part)
          .map((n) => {
            const t = file.tensors.get(n)!;
            return [n, { dtype: 'F32' as const, shape: [...t.shape], data: t.data as Float32Array }];
          }),
      );
      writeFileSync(join(dir, part), writeSafetensors(tensors, { format: 'pt' }));
    }
    rmSync(join(dir, 'model.safetensors'));
    indexEdit(weightMap);
    writeFileSync(join(dir, SHARD_INDEX_FILE), JSON.stringify({ metadata: { total_size: 0 }, weight_map: weightMap }));
  }

  it('a sharded checkpoint loads to the same parameters as the single file', async () => {
    const dir = copyOf('tiny-qwen2', (d) => shard(d));
    const sharded = await loadHfFolder(fsReader(dir));
    expect(sharded.weightFiles).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    expect(sharded.ck.config).toEqual(folders['tiny-qwen2'].ck.config);
    for (const [name, data] of Object.entries(folders['tiny-qwen2'].ck.params))
      expect(sharded.ck.params[name], name).toEqual(data);
  });

  it('refuses a stale index, a missing shard and a tensor in two shards, naming the files', async () => {
    const stale = copyOf('tiny-llama', (d) =>
      shard(d, (m) => (m['model.norm.weight'] = 'model-00001-of-00002.safetensors')),
    );
    await expect(loadHfFolder(fsReader(stale))).rejects.toThrow(
      /model.safetensors.index.json: says model.norm.weight is in model-00001-of-00002.safetensors, but model-00001-of-00002.safetensors does not hold it/,
    );
    const missing = copyOf('tiny-llama', (d) => {
      shard(d);
      rmSync(join(d, 'model-00002-of-00002.safetensors'));
    });
    await expect(loadHfFolder(fsReader(missing))).rejects.toThrow(
      /model.safetensors.index.json names the shard model-00002-of-00002.safetensors, which cannot be read/,
    );
    const twice = copyOf('tiny-llama', (d) => {
      shard(d);
      cpSync(join(d, 'model-00001-of-00002.safetensors'), join(d, 'model-00002-of-00002.safetensors'));
    });
    await expect(loadHfFolder(fsReader(twice))).rejects.toThrow(
      /tensor model.embed_tokens.weight is in both model-00001-of-00002.safetensors and model-00002-of-00002.safetensors/,
    );
    const badIndex = copyOf('tiny-llama', (d) => {
      shard(d);
      writeFileSync(
        join(d, SHARD_INDEX_FILE),
        JSON.stringify({ weight_map: { 'model.norm.weight': '../elsewhere.safetensors' } }),
      );
    });
    await expect(loadHfFolder(fsReader(badIndex))).rejects.toThrow(
      /weight_map\["model.norm.weight"\] is "..\/elsewhere.safetensors", not a file name in this folder/,
    );
  });

  it('takes the end of sequence from generation_config.json when tokenizer_config.json names none, and records it', async () => {
    const dir = copyOf('tiny-llama', (d) => {
      const c = JSON.parse(readFileSync(join(d, 'tokenizer_config.json'), 'utf8'));
      delete c.eos_token;
      writeFileSync(join(d, 'tokenizer_config.json'), JSON.stringify(c));
      // An id the conventional names would not find first: generation_config.json decides.
      writeFileSync(join(d, 'generation_config.json'), JSON.stringify({ eos_token_id: [0, 2] }));
    });
    const f = await loadHfFolder(fsReader(dir));
    expect(f.tokenizer.eosId).toBe(0);
    // The tokenizer_config.json saved with a run names it, so a checkpoint without generation_config.json agrees.
    expect(JSON.parse(f.tokenizerConfigJson!).eos_token).toBe('<pad>');
  });

  it('refuses missing weights, a Qwen2 file without its biases, and broken tokenizer files, naming each', async () => {
    const noWeights = copyOf('tiny-qwen2', (d) => rmSync(join(d, 'model.safetensors')));
    await expect(loadHfFolder(fsReader(noWeights))).rejects.toThrow(
      /model.safetensors.*nor is there a model.safetensors.index.json listing shards/,
    );
    const asLlama = copyOf('tiny-qwen2', (d) => {
      const c = JSON.parse(readFileSync(join(d, 'config.json'), 'utf8'));
      writeFileSync(
        join(d, 'config.json'),
        JSON.stringify({ ...c, model_type: 'llama', architectures: ['LlamaForCausalLM'] }),
      );
    });
    await expect(loadHfFolder(fsReader(asLlama))).rejects.toThrow(/Qwen2-style \(attention biases\)/);
    const noBias = copyOf('tiny-qwen2', (d) => {
      const file = readSafetensors(new Uint8Array(readFileSync(join(d, 'model.safetensors'))), { copy: true });
      const kept = new Map(
        [...file.tensors]
          .filter(([n]) => n !== 'model.layers.1.self_attn.v_proj.bias')
          .map(([n, t]) => [n, { dtype: 'F32' as const, shape: [...t.shape], data: t.data as Float32Array }]),
      );
      writeFileSync(join(d, 'model.safetensors'), writeSafetensors(kept));
    });
    await expect(loadHfFolder(fsReader(noBias))).rejects.toThrow(/missing tensor model.layers.1.self_attn.v_proj.bias/);
    const badTokenizer = copyOf('tiny-qwen2', (d) => writeFileSync(join(d, 'tokenizer.json'), '{"model": '));
    await expect(loadHfFolder(fsReader(badTokenizer))).rejects.toThrow(/^tokenizer.json is not valid JSON/);
    const badEos = copyOf('tiny-qwen2', (d) => {
      const c = JSON.parse(readFileSync(join(d, 'tokenizer_config.json'), 'utf8'));
      writeFileSync(join(d, 'tokenizer_config.json'), JSON.stringify({ ...c, eos_token: '<|nope|>' }));
    });
    await expect(loadHfFolder(fsReader(badEos))).rejects.toThrow(
      /^tokenizer_config.json eos_token "<\|nope\|>" is not in the vocabulary/,
    );
    const badTemplate = copyOf('tiny-qwen2', (d) => {
      const c = JSON.parse(readFileSync(join(d, 'tokenizer_config.json'), 'utf8'));
      writeFileSync(
        join(d, 'tokenizer_config.json'),
        JSON.stringify({ ...c, chat_template: '{% for m in messages %}' }),
      );
    });
    await expect(loadHfFolder(fsReader(badTemplate))).rejects.toThrow(
      /^tokenizer_config.json chat_template is not a template Jinja can read/,
    );
    const small = copyOf('tiny-llama', (d) => {
      const c = JSON.parse(readFileSync(join(d, 'config.json'), 'utf8'));
      writeFileSync(join(d, 'config.json'), JSON.stringify({ ...c, vocab_size: 100 }));
    });
    await expect(loadHfFolder(fsReader(small))).rejects.toThrow(
      /model.embed_tokens.weight: shape \[\d+, 16\], expected \[100, 16\]/,
    );
  });
});
