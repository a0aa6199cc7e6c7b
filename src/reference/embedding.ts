// CPU twin of shaders/embedding.wgsl: token-embedding lookup (forward) and its scatter-add (backward).
// Not the positional encoding (RoPE lives in rope.ts) and not the tied lm_head (that is a matmul).
// GPU entry points: embedding_forward; embeddingBackward is embedding_backward_links (chains of positions
// sharing a token) then embedding_backward (each chain summed in position order, as this twin adds).

import type { HostTensor } from '../core/host-tensor';

/** Checks the embedding shapes and returns (N rows, C channels, V vocabulary). */
function embeddingDims(
  kernel: string,
  rows: HostTensor,
  table: HostTensor,
  tokens: Uint32Array,
): { N: number; C: number; V: number } {
  if (table.shape.length !== 2) throw new Error(`${kernel}: table must be (V,C), got [${table.shape.join(', ')}]`);
  const [V, C] = table.shape;
  if (rows.shape.length < 2 || rows.shape[rows.shape.length - 1] !== C) {
    throw new Error(`${kernel}: activations must be (B,T,C) with C=${C}, got [${rows.shape.join(', ')}]`);
  }
  const N = rows.data.length / C;
  if (tokens.length !== N) throw new Error(`${kernel}: ${tokens.length} tokens for ${N} rows (B*T)`);
  for (let n = 0; n < N; n++) {
    if (tokens[n] >= V) throw new Error(`${kernel}: token ${tokens[n]} at row ${n} is outside the vocabulary (V=${V})`);
  }
  return { N, C, V };
}

/**
 * out[n, :] = table[tokens[n], :].
 * @param out    (B,T,C) activations, overwritten.
 * @param table  (V,C) embedding table.
 * @param tokens (B*T) token ids, each < V.
 */
export function embeddingForward(out: HostTensor, table: HostTensor, tokens: Uint32Array): void {
  const { N, C } = embeddingDims('embeddingForward', out, table, tokens);
  for (let n = 0; n < N; n++) {
    const src = tokens[n] * C;
    for (let c = 0; c < C; c++) out.data[n * C + c] = table.data[src + c];
  }
}

/**
 * dTable[tokens[n], :] += dOut[n, :] (scatter-ADD: repeated tokens sum, existing contents are kept,
 * so a tied lm_head gradient can be accumulated into the same buffer before or after).
 * @param dTable (V,C) gradient of the table, accumulated into.
 * @param dOut   (B,T,C) upstream gradient.
 * @param tokens (B*T) token ids.
 */
export function embeddingBackward(dTable: HostTensor, dOut: HostTensor, tokens: Uint32Array): void {
  const { N, C } = embeddingDims('embeddingBackward', dOut, dTable, tokens);
  for (let n = 0; n < N; n++) {
    const dst = tokens[n] * C;
    for (let c = 0; c < C; c++) dTable.data[dst + c] += dOut.data[n * C + c];
  }
}
