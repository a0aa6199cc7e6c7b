// Where LoRA adapters sit and what they are called: the adaptable projections, the adapters' Hugging Face/PEFT
// names and shapes, the scale s = alpha / r, PEFT's initialization, and parsing a target list. Shared by the CPU
// twins (src/reference/lora.ts), the GPU model, the trainer and the PEFT files; no adapter arithmetic here.

import type { Rng } from './random';

/** The projections an adapter can sit on, by their Hugging Face module names (PEFT's target_modules). */
export const LORA_TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

/** Rank, alpha and the adapted projections of a LoRA run. */
export interface LoraSpec {
  rank: number;
  alpha: number;
  targets: readonly LoraTarget[];
}

/** The dimensions LoRA needs of a model (a subset of ModelDims, so this file stays below the reference model). */
export interface LoraDims {
  dModel: number;
  nLayers: number;
  nHeads: number;
  nKvHeads: number;
  dFF: number;
  /** HD when it is not dModel / nHeads (ModelDims.headDim). */
  headDim?: number;
}

/** s = alpha / r, the factor on the adapter's output. */
export function loraScale(spec: LoraSpec): number {
  if (!(spec.rank >= 1)) throw new Error(`lora: rank must be at least 1, got ${spec.rank}`);
  return spec.alpha / spec.rank;
}

/** The module a projection belongs to inside a decoder layer: self_attn or mlp. */
function moduleOf(t: LoraTarget): string {
  return t === 'gate_proj' || t === 'up_proj' || t === 'down_proj' ? `mlp.${t}` : `self_attn.${t}`;
}

/** The Hugging Face name of layer l's projection module, without `.weight`: model.layers.3.self_attn.q_proj. */
export function loraModuleName(l: number, t: LoraTarget): string {
  return `model.layers.${l}.${moduleOf(t)}`;
}

/** The base weight an adapter adds to. */
export function loraBaseWeight(l: number, t: LoraTarget): string {
  return `${loraModuleName(l, t)}.weight`;
}

/** Names of layer l's adapter matrices on projection t (PEFT's names without its base_model.model. prefix). */
export function loraNames(l: number, t: LoraTarget): { A: string; B: string } {
  const m = loraModuleName(l, t);
  return { A: `${m}.lora_A.weight`, B: `${m}.lora_B.weight` };
}

/** (out, in) of a projection's weight. */
export function projectionShape(d: LoraDims, t: LoraTarget): [number, number] {
  const HD = d.headDim ?? d.dModel / d.nHeads;
  switch (t) {
    case 'q_proj':
      return [d.nHeads * HD, d.dModel];
    case 'k_proj':
    case 'v_proj':
      return [d.nKvHeads * HD, d.dModel];
    case 'o_proj':
      return [d.dModel, d.nHeads * HD];
    case 'gate_proj':
    case 'up_proj':
      return [d.dFF, d.dModel];
    case 'down_proj':
      return [d.dModel, d.dFF];
  }
}

/** Every adapter matrix's name and shape, layer by layer in LORA_TARGETS order, A before B. */
export function loraShapes(d: LoraDims, spec: LoraSpec): { name: string; shape: number[] }[] {
  const out: { name: string; shape: number[] }[] = [];
  for (let l = 0; l < d.nLayers; l++) {
    for (const t of LORA_TARGETS) {
      if (!spec.targets.includes(t)) continue;
      const [o, i] = projectionShape(d, t);
      const n = loraNames(l, t);
      out.push({ name: n.A, shape: [spec.rank, i] }, { name: n.B, shape: [o, spec.rank] });
    }
  }
  return out;
}

/**
 * Fresh adapters as PEFT initializes them (init_lora_weights=True): A from Kaiming-uniform with a = sqrt(5), which
 * is uniform in +-1/sqrt(in), and B zero, so the adapted model starts exactly at the base model.
 */
export function initLoraAdapters(d: LoraDims, spec: LoraSpec, rng: Rng): Record<string, Float32Array> {
  const out: Record<string, Float32Array> = {};
  for (const { name, shape } of loraShapes(d, spec)) {
    const data = new Float32Array(shape[0] * shape[1]);
    if (name.endsWith('lora_A.weight')) {
      const bound = 1 / Math.sqrt(shape[1]);
      for (let i = 0; i < data.length; i++) data[i] = rng.uniform(-bound, bound);
    }
    out[name] = data;
  }
  return out;
}

/** Parses a comma-separated target list (PEFT's module names); null: every projection. Throws naming the bad name. */
export function parseLoraTargets(text: string | null): LoraTarget[] {
  if (text === null) return [...LORA_TARGETS];
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.length === 0) throw new Error(`lists no projection; name some of ${LORA_TARGETS.join(', ')}`);
  for (const n of names)
    if (!(LORA_TARGETS as readonly string[]).includes(n))
      throw new Error(`${JSON.stringify(n)} is not a projection; the projections are ${LORA_TARGETS.join(', ')}`);
  // In the model's order, each once, so two spellings of the same set make the same adapters.
  return LORA_TARGETS.filter((t) => names.includes(t));
}
