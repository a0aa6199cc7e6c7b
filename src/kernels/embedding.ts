// Typed wrappers of shaders/embedding.wgsl: token-embedding lookup and its deterministic scatter-add backward.
// Same names and argument order as src/reference/embedding.ts, after the recorder. Token ids live on the GPU,
// so unlike the twin these cannot check ids < V: see the shader's header for what out-of-range ids do.
// The backward is two dispatches and uses N u32 of scratch this module keeps per context.
// The forward's table may be stored bf16 or f16 (frozen or reference weights): read through half-operand.ts, so
// the rows gathered are exactly the stored values widened to f32 (twin: embeddingForward on the rounded table).

import raw from '../../shaders/embedding.wgsl?raw';
import { declareShader, grid, uniforms, type GpuContext, type Recorder, type Tensor } from '../gpu';
import { operandCodec, withHalfOperand, type HalfCodec } from './half-operand';

const WG = 256;

const PARAMS = uniforms('Params', {
  rows: 'u32', // N = B*T
  C: 'u32',
  V: 'u32',
});
export const EMBEDDING_SHADER = declareShader('embedding.wgsl', raw, { uniforms: [PARAMS] });

/** Per-context scratch for the backward's links (N u32), grown by powers of two and never shrunk. */
const linkScratch = new WeakMap<GpuContext, Tensor<'u32'>>();

function links(ctx: GpuContext, N: number): Tensor<'u32'> {
  let t = linkScratch.get(ctx);
  if (!t || t.size < N) {
    // The old buffer is left alive (not destroyed): a recorder that is still open may have bound it.
    const size = Math.max(1024, 2 ** Math.ceil(Math.log2(N)));
    t = ctx.tensor<'u32'>([size], { dtype: 'u32', label: 'embedding.links' });
    linkScratch.set(ctx, t);
  }
  return t; // the kernels read only the first N entries
}

/** The embedding module, its table read through `codec` when the table is half. */
function family(ctx: GpuContext, codec: HalfCodec | null) {
  if (!codec) return ctx.family('embedding', EMBEDDING_SHADER.source);
  return ctx.family(`embedding-${codec}`, withHalfOperand(EMBEDDING_SHADER.source, 'table', codec));
}

/** Checks the embedding shapes and returns (N rows, C channels, V vocabulary). A half table only where `halfTable`. */
function embeddingDims(
  kernel: string,
  rows: Tensor,
  table: Tensor,
  tokens: Tensor,
  halfTable = false,
): { N: number; C: number; V: number } {
  if (table.shape.length !== 2) throw new Error(`${kernel}: table must be (V,C), got ${table.describe()}`);
  const [V, C] = table.shape;
  if (rows.shape.length < 2 || rows.shape[rows.shape.length - 1] !== C) {
    throw new Error(`${kernel}: activations must be (B,T,C) with C=${C}, got ${rows.describe()}`);
  }
  if (rows.dtype !== 'f32') throw new Error(`${kernel}: ${rows.describe()} must be f32`);
  if (table.dtype !== 'f32' && !(halfTable && (table.dtype === 'bf16' || table.dtype === 'f16')))
    throw new Error(`${kernel}: ${table.describe()} must be f32${halfTable ? ', bf16 or f16' : ''}`);
  if (tokens.dtype !== 'u32') throw new Error(`${kernel}: tokens must be u32, got ${tokens.describe()}`);
  const N = C === 0 ? 0 : rows.size / C;
  if (tokens.size !== N) throw new Error(`${kernel}: ${tokens.size} tokens for ${N} rows (B*T)`);
  return { N, C, V };
}

/**
 * out[n, :] = table[tokens[n], :].
 * @param out    (B,T,C) activations, overwritten.
 * @param table  (V,C) embedding table: f32, bf16 or f16.
 * @param tokens (B*T) u32 token ids, each < V (an id >= V yields a row of NaN).
 */
export function embeddingForward(rec: Recorder, out: Tensor, table: Tensor, tokens: Tensor<'u32'>): void {
  const { N, C, V } = embeddingDims('embeddingForward', out, table, tokens, true);
  rec.dispatch({
    family: family(rec.ctx, operandCodec('embeddingForward', 'table', table.dtype, rec.ctx.device)),
    entry: 'embedding_forward',
    constants: { WG },
    params: PARAMS.pack({ rows: N, C, V }),
    bindings: [out, table, tokens],
    workgroups: grid(Math.ceil((N * C) / WG), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
    // One table row read per token (the table is bound whole): out twice over (f32) plus the ids.
    cost: {
      bytes: out.byteLength + (out.size * table.byteLength) / Math.max(1, table.size) + tokens.byteLength,
      flops: 0,
    },
  });
}

/**
 * dTable[tokens[n], :] += dOut[n, :] (scatter-ADD: repeated tokens sum in position order, existing contents are
 * kept, so a tied lm_head gradient can share the buffer). Deterministic, no atomics; bit-identical to the twin.
 * Two dispatches: position links (next occurrence, first-occurrence flag), then per-channel walks of each chain.
 * @param dTable (V,C) gradient of the table, accumulated into.
 * @param dOut   (B,T,C) upstream gradient.
 * @param tokens (B*T) u32 token ids (ids >= V are ignored).
 */
export function embeddingBackward(rec: Recorder, dTable: Tensor, dOut: Tensor, tokens: Tensor<'u32'>): void {
  const { N, C, V } = embeddingDims('embeddingBackward', dOut, dTable, tokens);
  if (N === 0 || C === 0) return;
  const kernels = family(rec.ctx, null);
  const params = PARAMS.pack({ rows: N, C, V });
  const maxDim = rec.ctx.device.limits.maxComputeWorkgroupsPerDimension;
  const scratch = links(rec.ctx, N);
  rec.dispatch({
    family: kernels,
    entry: 'embedding_backward_links',
    constants: { WG },
    params,
    bindings: [scratch, tokens],
    workgroups: grid(Math.ceil(N / WG), maxDim),
  });
  rec.dispatch({
    family: kernels,
    entry: 'embedding_backward',
    constants: { WG },
    params,
    bindings: [dTable, dOut, tokens, scratch],
    workgroups: grid(Math.ceil((N * C) / WG), maxDim),
  });
}
