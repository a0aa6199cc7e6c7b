// Writes a random-initialised Hugging Face folder for each recorded real architecture (src/io/real-arch-folder.ts:
// exact widths, head dim and vocabulary, 2 layers by default, BF16 weights, a byte-level BPE tokenizer.json of the
// real vocabulary size) under a directory of your choice. Large (hundreds of MB): never committed; tests build them
// at test time. Run: npm run real-arch-folders -- <out-dir> [--layers N] [--f32] [model ...]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildRealArchFolder } from '../src/io/real-arch-folder';
import { REAL_CONFIG_FILES, type RealModelName } from '../src/io/real-models.fixture';

const args = process.argv.slice(2);
const out = args.find((a) => !a.startsWith('--') && !(a in REAL_CONFIG_FILES));
if (!out) {
  console.error(
    `usage: npm run real-arch-folders -- <out-dir> [--layers N] [--f32] [${Object.keys(REAL_CONFIG_FILES).join(' | ')} ...]`,
  );
  process.exit(2);
}
const layersAt = args.indexOf('--layers');
const layers = layersAt >= 0 ? Number(args[layersAt + 1]) : 2;
if (!Number.isInteger(layers) || layers < 1) {
  console.error(`--layers must be a positive integer, got ${args[layersAt + 1]}`);
  process.exit(2);
}
const asked = args.filter((a): a is RealModelName => a in REAL_CONFIG_FILES);
const names = asked.length ? asked : (Object.keys(REAL_CONFIG_FILES) as RealModelName[]);
for (const name of names) {
  const { files } = buildRealArchFolder(name, { layers, dtype: args.includes('--f32') ? 'F32' : 'BF16' });
  const dir = join(resolve(out), name);
  mkdirSync(dir, { recursive: true });
  let bytes = 0;
  for (const [file, data] of Object.entries(files)) {
    writeFileSync(join(dir, file), data);
    bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  }
  console.log(`wrote ${dir} (${Object.keys(files).join(', ')}; ${(bytes / 2 ** 20).toFixed(0)} MiB)`);
}
