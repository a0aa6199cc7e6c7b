// Bundles src/cli/bench.ts into .devbench/bench.mjs (run from the repo root; scripts/device-bench/pack.sh runs it).
// - `?raw` imports become the file's text (what src/cli/raw-loader.mjs does under tsx).
// - tfjs's extensionless relative imports resolve as any bundler resolves them (what tfjs-loader.mjs does).
// - webgpu's index.js is bundled; it loads dawn.node from $DAWN_NODE_PATH (else dawn.node beside bench.mjs).
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

const raw = {
  name: 'raw',
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (args) => ({
      path: resolve(args.resolveDir, args.path.slice(0, -4)),
      namespace: 'raw',
    }));
    b.onLoad({ filter: /.*/, namespace: 'raw' }, async (args) => ({
      contents: await readFile(args.path, 'utf8'),
      loader: 'text',
    }));
  },
};

const dawnPath = {
  name: 'dawn-path',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]webgpu[\\/]index\.js$/ }, async (args) => {
      const src = await readFile(args.path, 'utf8');
      const from = 'const dawnNodePath = join(';
      if (!src.includes(from)) throw new Error('webgpu/index.js changed: no dawnNodePath line');
      return {
        contents: src.replace(
          from,
          "const dawnNodePath = process.env.DAWN_NODE_PATH || join(__dirname, 'dawn.node') || join(",
        ),
        loader: 'js',
        resolveDir: dirname(args.path),
      };
    });
  },
};

const result = await build({
  entryPoints: ['src/cli/bench.ts'],
  outfile: '.devbench/bench.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  plugins: [raw, dawnPath],
  banner: {
    js: "import { createRequire as __devbenchCreateRequire } from 'node:module'; const require = __devbenchCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
  metafile: true,
  legalComments: 'none',
});
const inputs = Object.keys(result.metafile.inputs);
console.log(
  `bundled ${inputs.length} inputs; tfjs ${inputs.filter((p) => p.includes('@tensorflow')).length}, jax-js ${inputs.filter((p) => p.includes('@jax-js')).length}, webgpu ${inputs.filter((p) => p.includes('node_modules/webgpu')).length}`,
);
