// Writes the hub e2e's model folder (e2e/hub.spec.ts) into the directory given: a random SmolLM2-135M-architecture
// folder with the real vocabulary, tokenizer and special tokens but one narrow layer, so two GRPO steps run quickly on
// SwiftShader. Run by the spec through tsx (the fixtures' JSON imports need tsx's loader, not Playwright's).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRealArchFolder } from '../src/io/real-arch-folder';

const out = process.argv[2];
if (!out) throw new Error('usage: npx tsx e2e/hub-folder.ts <out-dir>');
const { files } = buildRealArchFolder('smollm2-135m', {
  layers: 1,
  configOverrides: { hidden_size: 64, intermediate_size: 128, num_attention_heads: 4, num_key_value_heads: 2 },
});
mkdirSync(out, { recursive: true });
for (const [file, data] of Object.entries(files)) writeFileSync(join(out, file), data);
