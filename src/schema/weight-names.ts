// The short names of a Llama-layout model's weights in the weights/<matrix>/* metrics (embed, layers.0.q, ...,
// norm, head; Qwen2's q/k/v biases as layers.0.q_bias, ...) and their order in the model, so the trainer that emits the metrics and the page that lays them out
// as heatmap rows agree. A leaf module (no imports). Not the parameter shapes (src/reference/model.ts).

/** A layer's parameters by their Hugging Face suffix, in the model's order, with their short names. */
const LAYER_PARTS = [
  ['input_layernorm.weight', 'attn_norm'],
  ['self_attn.q_proj.weight', 'q'],
  ['self_attn.q_proj.bias', 'q_bias'],
  ['self_attn.k_proj.weight', 'k'],
  ['self_attn.k_proj.bias', 'k_bias'],
  ['self_attn.v_proj.weight', 'v'],
  ['self_attn.v_proj.bias', 'v_bias'],
  ['self_attn.o_proj.weight', 'o'],
  ['post_attention_layernorm.weight', 'mlp_norm'],
  ['mlp.gate_proj.weight', 'gate'],
  ['mlp.up_proj.weight', 'up'],
  ['mlp.down_proj.weight', 'down'],
] as const;

const SHORT_OF_SUFFIX = new Map<string, string>(LAYER_PARTS);
const PART_INDEX = new Map<string, number>(LAYER_PARTS.map(([, short], i) => [short, i]));

/**
 * The short name of a parameter: model.embed_tokens.weight -> embed, model.layers.0.self_attn.q_proj.weight ->
 * layers.0.q, model.norm.weight -> norm, lm_head.weight -> head. Throws for a name outside the Llama layout.
 */
export function weightMetricName(hfName: string): string {
  if (hfName === 'model.embed_tokens.weight') return 'embed';
  if (hfName === 'model.norm.weight') return 'norm';
  if (hfName === 'lm_head.weight') return 'head';
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hfName);
  const part = m ? SHORT_OF_SUFFIX.get(m[2]) : undefined;
  if (!m || !part) throw new Error(`weightMetricName: ${hfName} is not a parameter of the Llama layout`);
  return `layers.${m[1]}.${part}`;
}

/**
 * Sorts short names in the model's order: embed, then each layer's parts in their order, then norm and head; a
 * name this layout does not know goes last, by name.
 */
export function compareWeightNames(a: string, b: string): number {
  const key = (n: string): [number, number, number] => {
    if (n === 'embed') return [0, 0, 0];
    if (n === 'norm') return [2, 0, 0];
    if (n === 'head') return [3, 0, 0];
    const m = /^layers\.(\d+)\.(.+)$/.exec(n);
    const part = m ? PART_INDEX.get(m[2]) : undefined;
    return m && part !== undefined ? [1, Number(m[1]), part] : [4, 0, 0];
  };
  const [x, y] = [key(a), key(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return a < b ? -1 : a > b ? 1 : 0;
}
