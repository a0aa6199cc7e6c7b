// Writes public/tokenizers/char/tokenizer.json, the lab's character-level vocabulary, from
// buildCharTokenizerJson() in src/io/tokenizer.ts (the single source of truth; a test checks the file matches).
// Run: npx tsx scripts/make-char-tokenizer.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCharTokenizerJson } from '../src/io/tokenizer';

const out = resolve(dirname(fileURLToPath(import.meta.url)), '../public/tokenizers/char/tokenizer.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(buildCharTokenizerJson(), null, 2) + '\n');
console.log(`wrote ${out}`);
