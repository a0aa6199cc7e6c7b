// CPU reference of the whole Llama-style policy: forward to logits and backward to every parameter, written as
// the same flat list of twin calls the GPU model will record (llm.c style; the backward is the list reversed).
// Matches Hugging Face LlamaForCausalLM in f32/f64, optionally with LoRA adapters on chosen projections
// (src/reference/lora.ts). Not the KV-cache decoder, sampler or losses (those sit on top); a KV cache stored half is
// modelled by rounding the keys and values attention reads (ModelForwardOptions.kvDtype).

import { attentionBackward, attentionForward } from './attention';
import { biasAdd, biasGrad } from './bias';
import { embeddingBackward, embeddingForward } from './embedding';
import { loraBackward, loraForward } from './lora';
import { loraNames, loraScale, loraShapes, type LoraSpec, type LoraTarget } from '../core/lora-layout';
import { matmul } from './matmul';
import { checkParams, headDim, paramShapes, type ModelDims, type ModelParams } from '../core/model-shapes';
import { rmsnormBackward, rmsnormForward } from './rmsnorm';
import { ropeBackward, ropeForward } from './rope';
import { swigluBackward, swigluForward } from './swiglu';
import type { FloatArray, HostTensor } from '../core/host-tensor';
import { roundToWeightDtype, type HalfDtype, type WeightDtype } from '../core/half';

// Dimension letters: B batch, T sequence, C dModel, V vocab, NH query heads, NKV kv heads, HD head dim
// (headDim, else C / NH), F dFF, L layers, N = B*T rows.

/** LoRA adapters on the model: the spec and the adapter matrices by name (loraShapes). */
export interface ModelLora {
  spec: LoraSpec;
  adapters: ModelParams;
}

/** Checks that every adapter the spec needs is present with its shape. */
function checkLora(d: ModelDims, lora: ModelLora): void {
  for (const { name, shape } of loraShapes(d, lora.spec)) {
    const t = lora.adapters[name];
    if (!t) throw new Error(`model: missing LoRA adapter ${name}`);
    if (t.shape.length !== 2 || t.shape[0] !== shape[0] || t.shape[1] !== shape[1])
      throw new Error(`model: ${name} has shape [${t.shape.join(', ')}], want [${shape.join(', ')}]`);
  }
}

/** Activations of one layer kept for the backward. */
export interface LayerCache {
  x: HostTensor; // (B,T,C) residual stream entering the layer
  n1: HostTensor; // (B,T,C) input_layernorm output
  rstd1: HostTensor; // (B,T)
  q: HostTensor; // (B,T,NH,HD) after RoPE
  k: HostTensor; // (B,T,NKV,HD) after RoPE
  /** With q/k norm (Qwen3): the projections' outputs before the per-head norm, and each head's 1/rms. */
  qkNorm?: { qPre: HostTensor; kPre: HostTensor; rstdQ: HostTensor; rstdK: HostTensor };
  v: HostTensor; // (B,T,NKV,HD)
  att: HostTensor; // (B,T,NH,HD) attention output before o_proj
  lse: HostTensor; // (B,NH,T)
  h: HostTensor; // (B,T,C) residual after the attention block
  n2: HostTensor; // (B,T,C) post_attention_layernorm output
  rstd2: HostTensor; // (B,T)
  gate: HostTensor; // (B,T,F)
  up: HostTensor; // (B,T,F)
  act: HostTensor; // (B,T,F) silu(gate) * up
  /** With LoRA: x A^T (N, r) of each adapted projection. */
  xa: Partial<Record<LoraTarget, HostTensor>>;
}

/** Everything modelBackward needs from modelForward. */
export interface ModelCache {
  B: number;
  T: number;
  f64: boolean;
  tokens: Uint32Array; // (B*T)
  layers: LayerCache[];
  xf: HostTensor; // (B,T,C) residual stream after the last layer
  nf: HostTensor; // (B,T,C) final norm output
  rstdf: HostTensor; // (B,T)
}

function alloc(f64: boolean, shape: readonly number[]): HostTensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const data: FloatArray = f64 ? new Float64Array(n) : new Float32Array(n);
  return { data, shape: [...shape] };
}

/** The same data seen with another shape (matmuls take 2-D (N, C) views of (B,T,C) activations). */
function view(t: HostTensor, shape: readonly number[]): HostTensor {
  return { data: t.data, shape: [...shape] };
}

/** Keys or values as a KV cache stored in `dtype` holds them: rounded to nearest even, widened back (f32). */
function roundKv(t: HostTensor, dtype: HalfDtype): HostTensor {
  if (t.data instanceof Float64Array) throw new Error('modelForward: a half KV cache is modelled in f32 only');
  return { data: roundToWeightDtype(t.data, dtype), shape: [...t.shape] };
}

function param(params: ModelParams, name: string): HostTensor {
  const t = params[name];
  if (!t) throw new Error(`model: missing parameter ${name}`);
  return t;
}

/** Options of modelForward beyond the inputs. */
export interface ModelForwardOptions {
  /**
   * The twin of a KV cache stored half (GpuModelOptions.kvDtype): attention reads every key (after RoPE) and value
   * rounded to this dtype and widened back, as a decoder writing them into that cache and reading them back does.
   * For decoding only: the layer caches keep the unrounded k and v, so modelBackward is not its gradient. Default f32.
   */
  kvDtype?: WeightDtype;
}

/**
 * Forward pass: logits (B,T,V) for tokens (B*T), positions 0..T-1 in every sequence.
 * Precision follows the embedding table (Float32Array or Float64Array).
 */
export function modelForward(
  d: ModelDims,
  params: ModelParams,
  tokens: Uint32Array,
  B: number,
  T: number,
  lora?: ModelLora,
  opts: ModelForwardOptions = {},
): { logits: HostTensor; cache: ModelCache } {
  checkParams(d, params);
  if (lora) checkLora(d, lora);
  if (tokens.length !== B * T) throw new Error(`modelForward: ${tokens.length} tokens for B*T = ${B}*${T}`);
  const { dModel: C, vocabSize: V, nHeads: NH, nKvHeads: NKV, dFF: F } = d;
  const HD = headDim(d);
  const N = B * T;
  const embed = param(params, 'model.embed_tokens.weight');
  const f64 = embed.data instanceof Float64Array;
  const a = (...shape: number[]) => alloc(f64, shape);
  const eps = { eps: d.normEps };
  const rope = { theta: d.ropeTheta, scaling: d.ropeScaling };
  const T2 = { transB: true }; // y = x W^T for (out, in) weights

  let x = a(B, T, C); // (B,T,C)
  embeddingForward(x, embed, tokens);
  const layers: LayerCache[] = [];
  for (let l = 0; l < d.nLayers; l++) {
    const p = `model.layers.${l}.`;
    const w = (n: string) => param(params, p + n);
    const c: LayerCache = {
      x,
      n1: a(B, T, C),
      rstd1: a(B, T),
      q: a(B, T, NH, HD),
      k: a(B, T, NKV, HD),
      v: a(B, T, NKV, HD),
      att: a(B, T, NH, HD),
      lse: a(B, NH, T),
      h: a(B, T, C),
      n2: a(B, T, C),
      rstd2: a(B, T),
      gate: a(B, T, F),
      up: a(B, T, F),
      act: a(B, T, F),
      xa: {},
    };
    // With LoRA, y += s (x A^T) B^T on each adapted projection, right after its base matmul.
    const adapt = (t: LoraTarget, y: HostTensor, xin: HostTensor) => {
      if (!lora?.spec.targets.includes(t)) return;
      const n = loraNames(l, t);
      const xa = (c.xa[t] = a(N, lora.spec.rank));
      loraForward(y, xa, xin, lora.adapters[n.A], lora.adapters[n.B], loraScale(lora.spec));
    };
    // attention block: h = x + o_proj(attn(rope(q_proj(n1)), rope(k_proj(n1)), v_proj(n1)))
    rmsnormForward(c.n1, c.rstd1, x, w('input_layernorm.weight'), eps);
    matmul(view(c.q, [N, NH * HD]), view(c.n1, [N, C]), w('self_attn.q_proj.weight'), T2);
    matmul(view(c.k, [N, NKV * HD]), view(c.n1, [N, C]), w('self_attn.k_proj.weight'), T2);
    matmul(view(c.v, [N, NKV * HD]), view(c.n1, [N, C]), w('self_attn.v_proj.weight'), T2);
    adapt('q_proj', view(c.q, [N, NH * HD]), view(c.n1, [N, C]));
    adapt('k_proj', view(c.k, [N, NKV * HD]), view(c.n1, [N, C]));
    adapt('v_proj', view(c.v, [N, NKV * HD]), view(c.n1, [N, C]));
    if (d.qkvBias) {
      // Qwen2: the biases are added before RoPE, as in Qwen2Attention.
      biasAdd(view(c.q, [N, NH * HD]), w('self_attn.q_proj.bias'));
      biasAdd(view(c.k, [N, NKV * HD]), w('self_attn.k_proj.bias'));
      biasAdd(view(c.v, [N, NKV * HD]), w('self_attn.v_proj.bias'));
    }
    if (d.qkNorm) {
      // Qwen3: RMSNorm over each head's HD values (rows of HD), before RoPE; the pre-norm values are kept.
      const qk = (c.qkNorm = { qPre: a(B, T, NH, HD), kPre: a(B, T, NKV, HD), rstdQ: a(N * NH), rstdK: a(N * NKV) });
      qk.qPre.data.set(c.q.data);
      qk.kPre.data.set(c.k.data);
      rmsnormForward(c.q, qk.rstdQ, qk.qPre, w('self_attn.q_norm.weight'), eps);
      rmsnormForward(c.k, qk.rstdK, qk.kPre, w('self_attn.k_norm.weight'), eps);
    }
    ropeForward(c.q, c.q, rope);
    ropeForward(c.k, c.k, rope);
    const kvDtype = opts.kvDtype ?? 'f32';
    if (kvDtype === 'f32') attentionForward(c.att, c.lse, c.q, c.k, c.v);
    else attentionForward(c.att, c.lse, c.q, roundKv(c.k, kvDtype), roundKv(c.v, kvDtype));
    c.h.data.set(x.data); // residual
    matmul(view(c.h, [N, C]), view(c.att, [N, NH * HD]), w('self_attn.o_proj.weight'), {
      transB: true,
      accumulate: true,
    });
    adapt('o_proj', view(c.h, [N, C]), view(c.att, [N, NH * HD]));
    // MLP block: x' = h + down_proj(silu(gate_proj(n2)) * up_proj(n2))
    rmsnormForward(c.n2, c.rstd2, c.h, w('post_attention_layernorm.weight'), eps);
    matmul(view(c.gate, [N, F]), view(c.n2, [N, C]), w('mlp.gate_proj.weight'), T2);
    matmul(view(c.up, [N, F]), view(c.n2, [N, C]), w('mlp.up_proj.weight'), T2);
    adapt('gate_proj', view(c.gate, [N, F]), view(c.n2, [N, C]));
    adapt('up_proj', view(c.up, [N, F]), view(c.n2, [N, C]));
    swigluForward(c.act, c.gate, c.up);
    const next = a(B, T, C);
    next.data.set(c.h.data); // residual
    matmul(view(next, [N, C]), view(c.act, [N, F]), w('mlp.down_proj.weight'), { transB: true, accumulate: true });
    adapt('down_proj', view(next, [N, C]), view(c.act, [N, F]));
    layers.push(c);
    x = next;
  }
  const nf = a(B, T, C);
  const rstdf = a(B, T);
  rmsnormForward(nf, rstdf, x, param(params, 'model.norm.weight'), eps);
  const logits = a(B, T, V); // (B,T,V)
  const lm = param(params, d.tiedEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
  matmul(view(logits, [N, V]), view(nf, [N, C]), lm, T2);
  return { logits, cache: { B, T, f64, tokens: tokens.slice(), layers, xf: x, nf, rstdf } };
}

/**
 * Backward pass: gradients of every parameter (same names and shapes as params, freshly zeroed and then
 * filled) for the upstream gradient dLogits (B,T,V). The forward list, reversed. With LoRA (the same adapters as
 * the forward's) the adapters' gradients are included under their names; the base's are computed all the same
 * (the GPU model skips them, since the base is frozen).
 */
export function modelBackward(
  d: ModelDims,
  params: ModelParams,
  cache: ModelCache,
  dLogits: HostTensor,
  lora?: ModelLora,
): ModelParams {
  checkParams(d, params);
  if (lora) checkLora(d, lora);
  const { B, T, f64 } = cache;
  const { dModel: C, vocabSize: V, nHeads: NH, nKvHeads: NKV, dFF: F } = d;
  const HD = headDim(d);
  const N = B * T;
  if (dLogits.data.length !== N * V)
    throw new Error(`modelBackward: dLogits has ${dLogits.data.length} elements, want (B,T,V)=${N * V}`);
  const a = (...shape: number[]) => alloc(f64, shape);
  const grads: ModelParams = {};
  for (const { name, shape } of paramShapes(d)) grads[name] = a(...shape);
  if (lora) for (const { name, shape } of loraShapes(d, lora.spec)) grads[name] = a(...shape);
  const dxa = lora ? a(N, lora.spec.rank) : null; // scratch: the gradient of x A^T
  const rope = { theta: d.ropeTheta, scaling: d.ropeScaling };
  const TA = { transA: true, accumulate: true }; // dW += dY^T X

  // lm head: logits = nf W^T
  const lmName = d.tiedEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
  const dL = view(dLogits, [N, V]);
  const dnf = a(N, C);
  matmul(dnf, dL, param(params, lmName));
  matmul(grads[lmName], dL, view(cache.nf, [N, C]), TA);
  const dx = a(B, T, C); // (B,T,C) gradient of the residual stream, carried down through the layers
  rmsnormBackward(dx, grads['model.norm.weight'], dnf, cache.xf, param(params, 'model.norm.weight'), cache.rstdf);

  const dn = a(B, T, C); // (B,T,C) scratch: gradient of a norm output
  const dact = a(B, T, F);
  const dgate = a(B, T, F);
  const dup = a(B, T, F);
  const datt = a(B, T, NH, HD);
  const dq = a(B, T, NH, HD);
  const dk = a(B, T, NKV, HD);
  const dv = a(B, T, NKV, HD);
  for (let l = d.nLayers - 1; l >= 0; l--) {
    const p = `model.layers.${l}.`;
    const w = (n: string) => param(params, p + n);
    const g = (n: string) => grads[p + n];
    const c = cache.layers[l];
    const dx2 = view(dx, [N, C]);
    // With LoRA, each adapted projection adds dA, dB and its part of the input's gradient (dX accumulates).
    const adaptBack = (t: LoraTarget, dX: HostTensor, dY: HostTensor, xin: HostTensor) => {
      if (!lora || !dxa || !lora.spec.targets.includes(t)) return;
      const n = loraNames(l, t);
      const xa = c.xa[t];
      if (!xa) throw new Error(`modelBackward: the forward kept no LoRA activation for layer ${l} ${t}`);
      loraBackward(
        dX,
        grads[n.A],
        grads[n.B],
        dxa,
        dY,
        xin,
        xa,
        lora.adapters[n.A],
        lora.adapters[n.B],
        loraScale(lora.spec),
      );
    };
    // MLP block, reversed (dx is the gradient of x' and, through the residual, of h)
    matmul(view(dact, [N, F]), dx2, w('mlp.down_proj.weight'));
    matmul(g('mlp.down_proj.weight'), dx2, view(c.act, [N, F]), TA);
    adaptBack('down_proj', view(dact, [N, F]), dx2, view(c.act, [N, F]));
    swigluBackward(dgate, dup, dact, c.gate, c.up);
    matmul(view(dn, [N, C]), view(dgate, [N, F]), w('mlp.gate_proj.weight'));
    matmul(view(dn, [N, C]), view(dup, [N, F]), w('mlp.up_proj.weight'), { accumulate: true });
    adaptBack('gate_proj', view(dn, [N, C]), view(dgate, [N, F]), view(c.n2, [N, C]));
    adaptBack('up_proj', view(dn, [N, C]), view(dup, [N, F]), view(c.n2, [N, C]));
    matmul(g('mlp.gate_proj.weight'), view(dgate, [N, F]), view(c.n2, [N, C]), TA);
    matmul(g('mlp.up_proj.weight'), view(dup, [N, F]), view(c.n2, [N, C]), TA);
    rmsnormBackward(dx, g('post_attention_layernorm.weight'), dn, c.h, w('post_attention_layernorm.weight'), c.rstd2, {
      accumulate: true,
    }); // dx is now dh
    // attention block, reversed
    matmul(view(datt, [N, NH * HD]), dx2, w('self_attn.o_proj.weight'));
    matmul(g('self_attn.o_proj.weight'), dx2, view(c.att, [N, NH * HD]), TA);
    adaptBack('o_proj', view(datt, [N, NH * HD]), dx2, view(c.att, [N, NH * HD]));
    attentionBackward(dq, dk, dv, datt, c.q, c.k, c.v, c.att, c.lse);
    ropeBackward(dq, dq, rope);
    ropeBackward(dk, dk, rope);
    if (d.qkNorm) {
      // dq, dk are the gradients of the normed heads here; through the norm they become the projections'.
      const qk = c.qkNorm;
      if (!qk) throw new Error(`modelBackward: the forward kept no q/k norm activations for layer ${l}`);
      const dqn = a(B, T, NH, HD);
      const dkn = a(B, T, NKV, HD);
      dqn.data.set(dq.data);
      dkn.data.set(dk.data);
      rmsnormBackward(dq, g('self_attn.q_norm.weight'), dqn, qk.qPre, w('self_attn.q_norm.weight'), qk.rstdQ);
      rmsnormBackward(dk, g('self_attn.k_norm.weight'), dkn, qk.kPre, w('self_attn.k_norm.weight'), qk.rstdK);
    }
    if (d.qkvBias) {
      // dq, dk, dv are now the gradients of the projections' outputs (before RoPE), so each bias gets their column sums.
      biasGrad(g('self_attn.q_proj.bias'), view(dq, [N, NH * HD]));
      biasGrad(g('self_attn.k_proj.bias'), view(dk, [N, NKV * HD]));
      biasGrad(g('self_attn.v_proj.bias'), view(dv, [N, NKV * HD]));
    }
    matmul(view(dn, [N, C]), view(dq, [N, NH * HD]), w('self_attn.q_proj.weight'));
    matmul(view(dn, [N, C]), view(dk, [N, NKV * HD]), w('self_attn.k_proj.weight'), { accumulate: true });
    matmul(view(dn, [N, C]), view(dv, [N, NKV * HD]), w('self_attn.v_proj.weight'), { accumulate: true });
    adaptBack('q_proj', view(dn, [N, C]), view(dq, [N, NH * HD]), view(c.n1, [N, C]));
    adaptBack('k_proj', view(dn, [N, C]), view(dk, [N, NKV * HD]), view(c.n1, [N, C]));
    adaptBack('v_proj', view(dn, [N, C]), view(dv, [N, NKV * HD]), view(c.n1, [N, C]));
    matmul(g('self_attn.q_proj.weight'), view(dq, [N, NH * HD]), view(c.n1, [N, C]), TA);
    matmul(g('self_attn.k_proj.weight'), view(dk, [N, NKV * HD]), view(c.n1, [N, C]), TA);
    matmul(g('self_attn.v_proj.weight'), view(dv, [N, NKV * HD]), view(c.n1, [N, C]), TA);
    rmsnormBackward(dx, g('input_layernorm.weight'), dn, c.x, w('input_layernorm.weight'), c.rstd1, {
      accumulate: true,
    }); // dx is now d(layer input)
  }
  embeddingBackward(grads['model.embed_tokens.weight'], dx, cache.tokens);
  return grads;
}
