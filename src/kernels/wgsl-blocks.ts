// The shared WGSL blocks (shaders/blocks/*.wgsl), each written once, by the names of the regions that stand for
// them in the shaders as written (src/gpu/specialize.ts): there a region holds only stand-ins, and a kernel's
// declaration (declareShader with these blocks) fills it with the block's text; and the row kernels' reduction
// variant per device: the lane merges of block row-lanes through workgroup memory, or block row-lanes-subgroup's
// in region row-lanes where the device has `subgroups`. A block is added here with its `?raw` import; the
// specializer reads no files itself, so that one registry serves Vite in the browser and src/cli/raw-loader.mjs
// in Node.

import attentionRowsHead from '../../shaders/blocks/attention-rows-head.wgsl?raw';
import halfBits from '../../shaders/blocks/half-bits.wgsl?raw';
import rowLanes from '../../shaders/blocks/row-lanes.wgsl?raw';
import rowLanesSubgroup from '../../shaders/blocks/row-lanes-subgroup.wgsl?raw';
import rowLayout from '../../shaders/blocks/row-layout.wgsl?raw';
import rowMaxLogsum from '../../shaders/blocks/row-max-logsum.wgsl?raw';
import rowStats from '../../shaders/blocks/row-stats.wgsl?raw';
import type { GpuContext, KernelFamily } from '../gpu';
import { blockText, specialize } from '../gpu/specialize';

/** Block name (its file's name under shaders/blocks, without .wgsl) -> its text. */
export const WGSL_BLOCKS: Readonly<Record<string, string>> = {
  'attention-rows-head': attentionRowsHead,
  'half-bits': halfBits,
  'row-layout': rowLayout,
  'row-lanes': rowLanes,
  'row-lanes-subgroup': rowLanesSubgroup,
  'row-max-logsum': rowMaxLogsum,
  'row-stats': rowStats,
};

/**
 * How the row kernels (softmax, cross-entropy, logprob, sampler) merge a row's lanes: 'workgroup' through
 * workgroup memory (block row-lanes, every device), 'subgroups' with subgroup shuffles (block row-lanes-subgroup).
 */
export type RowReduction = 'workgroup' | 'subgroups';

/** The kernel families whose shaders merge lanes through block row-lanes: the ones with two variants. */
export const ROW_REDUCTION_FAMILIES: readonly string[] = ['softmax', 'cross-entropy', 'logprob', 'sampler'];

/** The row reduction a device runs: 'subgroups' exactly when the device was created with that feature. */
export function rowReductionOf(ctx: GpuContext): RowReduction {
  return ctx.device.features.has('subgroups') ? 'subgroups' : 'workgroup';
}

/**
 * `source` (the declared source of shaders/<shaderName>: region row-lanes holds block row-lanes) in a row
 * reduction variant: with 'subgroups', region row-lanes holds block row-lanes-subgroup and the module starts with
 * `enable subgroups;`; with 'workgroup', the source as declared (region `as-written` dropped).
 */
export function withRowReduction(source: string, shaderName: string, reduction: RowReduction = 'workgroup'): string {
  if (reduction === 'workgroup') return specialize(source, {}, shaderName);
  const regions = { 'row-lanes': blockText('row-lanes-subgroup', WGSL_BLOCKS) };
  return `enable subgroups;\n${specialize(source, { regions }, shaderName)}`;
}

const expansions = new Map<string, string>();

/**
 * The kernel family of a row shader on this context, in the context's variant (rowReductionOf). A context has
 * one variant for all its families, so the sampler and logprob merge a row in the same order; the family keeps
 * the shader's name either way (profiles and errors name the same kernels).
 */
export function rowFamily(ctx: GpuContext, familyName: string, template: string, shaderName: string): KernelFamily {
  const reduction = rowReductionOf(ctx);
  const key = `${shaderName}|${reduction}`;
  let source = expansions.get(key);
  if (source === undefined) {
    source = withRowReduction(template, shaderName, reduction);
    expansions.set(key, source);
  }
  return ctx.family(familyName, source);
}
