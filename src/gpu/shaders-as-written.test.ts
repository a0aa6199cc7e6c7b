// Every shader file (shaders/*.wgsl) is valid WGSL as written: Dawn compiles each raw file, unexpanded, with no
// error, and creates a compute pipeline for each of its entry points with the overrides' defaults. The
// specializer (src/gpu/specialize.ts) only makes variants of what already compiles. The blocks under
// shaders/blocks are fragments: a shader as written holds stand-ins for a block's declarations in a region of its
// name, with the block's exact signatures (src/kernels/wgsl-blocks.test.ts), and compiles with them here; its
// declaration puts the block's text in their place.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useNodeDevice } from '../testing/test-device';

const shaderDir = new URL('../../shaders/', import.meta.url);
const files = readdirSync(shaderDir)
  .filter((f) => f.endsWith('.wgsl'))
  .sort();
/** The entry points of a shader: `@compute ... fn name(`. */
const entryPoints = (wgsl: string) =>
  [...wgsl.replace(/\/\/.*$/gm, '').matchAll(/@compute\b[^{]*?\bfn\s+(\w+)\s*\(/g)].map((m) => m[1]);

describe('shaders as written', () => {
  const gpu = useNodeDevice();

  it('are all here: one file per kernel family, each with an entry point', () => {
    expect(files.length).toBeGreaterThanOrEqual(24);
    for (const f of files)
      expect(entryPoints(readFileSync(new URL(f, shaderDir), 'utf8')).length, f).toBeGreaterThan(0);
  });

  it.each(files)('%s compiles as written, every entry point with the default overrides', async (file) => {
    const code = readFileSync(new URL(file, shaderDir), 'utf8');
    const device = gpu.ctx.device;
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ label: file, code });
    const errors = (await module.getCompilationInfo()).messages
      .filter((m) => m.type === 'error')
      .map((m) => `${file}:${m.lineNum}:${m.linePos}: ${m.message}`);
    expect(errors).toEqual([]);
    for (const entryPoint of entryPoints(code))
      await device.createComputePipelineAsync({
        label: `${file} ${entryPoint}`,
        layout: 'auto',
        compute: { module, entryPoint },
      });
    const scoped = await device.popErrorScope();
    expect(scoped?.message ?? null).toBeNull();
  });
});
