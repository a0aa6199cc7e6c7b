// Writes public/models/tiny-llama/ and public/models/tiny-qwen2/: two tiny randomly initialized Hugging Face
// checkpoints with byte-level BPE tokenizers learned from the tasks' prompts and answers (src/io/tiny-hf.ts
// builds them; a test checks the committed files match). Deterministic. Run: npm run tiny-models
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTinyHfFolders } from '../src/io/tiny-hf';
import { taskCorpus } from '../src/tasks/corpus';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../public/models');
for (const [name, files] of Object.entries(buildTinyHfFolders(taskCorpus()))) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  let bytes = 0;
  for (const [file, data] of Object.entries(files)) {
    writeFileSync(join(dir, file), data);
    bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  }
  console.log(`wrote ${dir} (${Object.keys(files).join(', ')}; ${(bytes / 1024).toFixed(0)} KB)`);
}
