// The shared WGSL blocks (shaders/blocks/*.wgsl) by the names their `// @include` markers use, and the expansion
// of a shader with them (src/gpu/template.ts). A block is added here with its `?raw` import; the expander reads
// no files itself, so that one registry serves Vite in the browser and src/cli/raw-loader.mjs in Node.

import rowLanes from '../../shaders/blocks/row-lanes.wgsl?raw';
import rowLayout from '../../shaders/blocks/row-layout.wgsl?raw';
import rowMaxLogsum from '../../shaders/blocks/row-max-logsum.wgsl?raw';
import rowStats from '../../shaders/blocks/row-stats.wgsl?raw';
import { expandIncludes } from '../gpu/template';

/** Block name (its file's name under shaders/blocks, without .wgsl) -> its text. */
export const WGSL_BLOCKS: Readonly<Record<string, string>> = {
  'row-layout': rowLayout,
  'row-lanes': rowLanes,
  'row-max-logsum': rowMaxLogsum,
  'row-stats': rowStats,
};

/** `source` (shaders/<shaderName>) with its `// @include` lines replaced by the blocks' text. */
export function withBlocks(source: string, shaderName: string): string {
  return expandIncludes(source, WGSL_BLOCKS, shaderName);
}
