// Fuzz cases for checkpoints: a valid model.safetensors + config.json of the nano model, with its safetensors
// header, its bytes and its config.json broken one way at a time (seeded and table-driven, no GPU). Each case is
// refused with SafetensorsError or CheckpointError naming the tensor, the key or the rule (never a TypeError or
// RangeError), or, for edits that leave a valid file (bytes of tensor data), read back.
import { describe, expect, it } from 'vitest';
import { INHERITED_NAMES, pick } from '../reference/fuzz-inputs';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { CheckpointError } from '../io/hf-layout';
import { decodeCheckpoint, encodeCheckpoint, type ParamArrays } from '../io/checkpoint';
import { MODEL_PRESETS } from '../schema/model-config';
import { readSafetensors, SafetensorsError } from '../io/safetensors';

const config = MODEL_PRESETS.nano;
const special = { bosId: 1, eosId: 2, padId: 0 };
const params: ParamArrays = Object.fromEntries(
  Object.entries(initParams(config, new Rng(5))).map(([k, v]) => [k, Float32Array.from(v.data)]),
);
const good = encodeCheckpoint({ config, params, metadata: { made_by: 'fuzz' }, special });

/** The file's header as JSON text and its data bytes. */
function split(file: Uint8Array): { header: Record<string, unknown>; data: Uint8Array } {
  const n = Number(new DataView(file.buffer, file.byteOffset, 8).getBigUint64(0, true));
  return {
    header: JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + n))) as Record<string, unknown>,
    data: file.subarray(8 + n),
  };
}

/** A safetensors file from header text and data bytes (the header's length written in front). */
function join(headerText: string, data: Uint8Array, declared?: bigint): Uint8Array {
  const h = new TextEncoder().encode(headerText);
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, declared ?? BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

interface Case {
  label: string;
  safetensors: Uint8Array;
  configJson: string;
  /** Text the refusal must contain; null when the edit may leave a valid checkpoint. */
  mustName: string | null;
}

function cases(): Case[] {
  const rng = new Rng(9_001);
  const out: Case[] = [];
  const { header, data } = split(good.safetensors);
  const names = Object.keys(header).filter((k) => k !== '__metadata__');
  const withEntry = (
    label: string,
    edit: (h: Record<string, unknown>, name: string) => void,
    mustName: (name: string) => string | null,
  ) => {
    const name = pick(rng, names);
    const h = structuredClone(header);
    edit(h, name);
    out.push({
      label: `${label} (${name})`,
      safetensors: join(JSON.stringify(h), data),
      configJson: good.configJson,
      mustName: mustName(name),
    });
  };
  const entry = (h: Record<string, unknown>, name: string) => h[name] as Record<string, unknown>;
  for (const dtype of ['F33', 5, null, '__proto__', 'constructor', 'toString', '', 'f32']) {
    withEntry(
      `dtype ${JSON.stringify(dtype)}`,
      (h, n) => (entry(h, n).dtype = dtype),
      (n) => `tensor "${n}": unknown dtype`,
    );
  }
  for (const shape of [[-1], [1.5], 'x', null, [1e20], [2 ** 53], ['3'], {}]) {
    withEntry(
      `shape ${JSON.stringify(shape)}`,
      (h, n) => (entry(h, n).shape = shape),
      (n) => `tensor "${n}"`,
    );
  }
  for (const off of [[5, 2], [0], 'x', null, [0, 1e20], [-4, 0], [0.5, 4], {}]) {
    withEntry(
      `data_offsets ${JSON.stringify(off)}`,
      (h, n) => (entry(h, n).data_offsets = off),
      (n) => `tensor "${n}"`,
    );
  }
  for (const e of [null, [], 5, 'x', {}])
    withEntry(
      `entry ${JSON.stringify(e)}`,
      (h, n) => (h[n] = e),
      (n) => `tensor "${n}"`,
    );
  for (const name of INHERITED_NAMES) {
    // A tensor renamed to a name every object inherits: a foreign tensor, with the expected one missing.
    withEntry(
      `renamed to ${name}`,
      (h, n) => {
        Object.defineProperty(h, name, { value: h[n], enumerable: true, configurable: true, writable: true });
        delete h[n];
      },
      (n) => n,
    );
  }
  for (const meta of [[], 'x', 5, { a: 5 }, { a: null }, { a: {} }]) {
    const h = structuredClone(header);
    h.__metadata__ = meta;
    out.push({
      label: `__metadata__ ${JSON.stringify(meta)}`,
      safetensors: join(JSON.stringify(h), data),
      configJson: good.configJson,
      mustName: '__metadata__',
    });
  }
  {
    const text = JSON.stringify(header).replace(
      '"__metadata__":{',
      '"__metadata__":{"__proto__":"x","constructor":"y",',
    );
    out.push({
      label: '__metadata__ with inherited names',
      safetensors: join(text, data),
      configJson: good.configJson,
      mustName: null,
    });
  }
  for (const declared of [0n, 1n, 2n ** 63n, BigInt(good.safetensors.length), 100_000_001n]) {
    out.push({
      label: `header length ${declared}`,
      safetensors: join(JSON.stringify(header), data, declared),
      configJson: good.configJson,
      mustName: 'safetensors: ',
    });
  }
  for (const text of ['', '[]', 'null', '{', '{"a":', '\u00ff\u00fe', ' {}']) {
    out.push({
      label: `header text ${JSON.stringify(text)}`,
      safetensors: join(text, data),
      configJson: good.configJson,
      mustName: 'safetensors: ',
    });
  }
  for (let i = 0; i < 40; i++) {
    const cut = rng.int(good.safetensors.length - 1);
    out.push({
      label: `cut at byte ${cut}`,
      safetensors: good.safetensors.slice(0, cut),
      configJson: good.configJson,
      mustName: 'safetensors: ',
    });
  }
  for (let i = 0; i < 10; i++) {
    const extra = new Uint8Array(good.safetensors.length + 1 + rng.int(64));
    extra.set(good.safetensors);
    out.push({
      label: `trailing bytes ${i}`,
      safetensors: extra,
      configJson: good.configJson,
      mustName: 'safetensors: ',
    });
  }
  // One byte of the header changed: refused by name, or (a digit for a digit, a space) still a valid file.
  const headerBytes = 8 + Number(new DataView(good.safetensors.buffer).getBigUint64(0, true));
  for (let i = 0; i < 60; i++) {
    const f = good.safetensors.slice();
    f[8 + rng.int(headerBytes - 8)] = rng.int(256);
    out.push({ label: `header byte ${i}`, safetensors: f, configJson: good.configJson, mustName: null });
  }
  // Tensor data changed: any bytes are numbers (NaN included), so the file stays readable.
  for (let i = 0; i < 20; i++) {
    const f = good.safetensors.slice();
    f[headerBytes + rng.int(f.length - headerBytes)] = rng.int(256);
    out.push({ label: `data byte ${i}`, safetensors: f, configJson: good.configJson, mustName: null });
  }
  // config.json: every size key with wrong values, removed, and the file not JSON or not an object.
  const cfg = JSON.parse(good.configJson) as Record<string, unknown>;
  for (const key of [
    'vocab_size',
    'hidden_size',
    'intermediate_size',
    'num_hidden_layers',
    'num_attention_heads',
    'num_key_value_heads',
    'max_position_embeddings',
    'rms_norm_eps',
    'rope_theta',
    'tie_word_embeddings',
    'bos_token_id',
    'torch_dtype',
  ]) {
    for (const v of [-1, 'x', 1.5, [], {}, 1e300]) {
      if (key === 'rope_theta' && v === 1e300) continue; // a huge but positive theta is a valid config
      if ((key === 'rms_norm_eps' || key === 'rope_theta') && v === 1.5) continue;
      // Some values pass config.json's own rules and break the engine's (rms_norm_eps 1e300): named all the same.
      out.push({
        label: `config.json ${key}=${JSON.stringify(v)}`,
        safetensors: good.safetensors,
        configJson: JSON.stringify({ ...cfg, [key]: v }),
        mustName: key,
      });
    }
  }
  for (const key of ['vocab_size', 'hidden_size', 'num_hidden_layers']) {
    const { [key]: _, ...rest } = cfg;
    out.push({
      label: `config.json without ${key}`,
      safetensors: good.safetensors,
      configJson: JSON.stringify(rest),
      mustName: key,
    });
  }
  for (const text of ['', '{', '[]', 'null', '5', `{"model_type":"${'g'.repeat(10_000)}"}`]) {
    out.push({
      label: `config.json text ${text.slice(0, 20)}`,
      safetensors: good.safetensors,
      configJson: text,
      mustName: 'config.json',
    });
  }
  out.push({
    label: 'config.json model_type gpt2',
    safetensors: good.safetensors,
    configJson: JSON.stringify({ ...cfg, model_type: 'gpt2' }),
    mustName: 'model_type',
  });
  out.push({
    label: 'config.json with inherited keys',
    safetensors: good.safetensors,
    configJson: good.configJson.replace('{', '{"__proto__":{"vocab_size":7},"constructor":1,'),
    mustName: null,
  });
  return out;
}

const CASES = cases();

describe('fuzz: checkpoints (safetensors headers and config.json)', () => {
  it.each(CASES.map((c) => [c.label, c] as const))('%s', (_, c) => {
    let refused: Error | null = null;
    try {
      const ck = decodeCheckpoint(c.safetensors, c.configJson);
      expect(Object.keys(ck.params).length).toBe(Object.keys(params).length);
    } catch (e) {
      if (!(e instanceof SafetensorsError || e instanceof CheckpointError)) throw e;
      refused = e;
    }
    if (c.mustName !== null) {
      expect(refused, `${c.label}: accepted in silence`).not.toBeNull();
      expect(refused!.message).toContain(c.mustName);
    }
    if (refused) expect(refused.message.length, c.label).toBeLessThanOrEqual(2_000);
    expect(Object.prototype).not.toHaveProperty('vocab_size');
  });

  it('reads the safetensors alone the same way: its own error or a file', () => {
    for (const c of CASES) {
      try {
        readSafetensors(c.safetensors);
      } catch (e) {
        expect(e, c.label).toBeInstanceOf(SafetensorsError);
      }
    }
  });

  it('has several hundred cases', () => {
    expect(CASES.length).toBeGreaterThan(200);
  });
});
