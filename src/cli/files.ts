// Node-side files: checkpoint directories (model.safetensors + config.json + tokenizer.json) and the char
// tokenizer shipped in public/. The browser stores the same bytes in IndexedDB instead.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeCheckpoint, encodeCheckpoint, type Checkpoint } from '../model/checkpoint';
import { loadCharTokenizer, type Tokenizer } from '../model/tokenizer';
import { PUBLIC_ASSETS, PUBLIC_DIR } from '../engine/node-assets';

export { PUBLIC_ASSETS, PUBLIC_DIR };
export const CHAR_TOKENIZER_PATH = new URL('tokenizers/char/tokenizer.json', PUBLIC_DIR);

export function loadCharTokenizerFile(): { tok: Tokenizer; json: string } {
  const json = readFileSync(CHAR_TOKENIZER_PATH, 'utf8');
  return { tok: loadCharTokenizer(json), json };
}

export function saveCheckpointDir(dir: string, ck: Checkpoint, tokenizerJson: string): void {
  mkdirSync(dir, { recursive: true });
  const { safetensors, configJson } = encodeCheckpoint(ck);
  writeFileSync(join(dir, 'model.safetensors'), safetensors);
  writeFileSync(join(dir, 'config.json'), configJson);
  writeFileSync(join(dir, 'tokenizer.json'), tokenizerJson);
}

/** Reads a checkpoint directory; a missing or malformed file fails with its path in the message. */
export function loadCheckpointDir(dir: string): { ck: Checkpoint; tok: Tokenizer } {
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name));
    } catch {
      throw new Error(`checkpoint ${dir}: cannot read ${name} (a checkpoint directory holds model.safetensors, config.json and tokenizer.json)`);
    }
  };
  const ck = decodeCheckpoint(new Uint8Array(read('model.safetensors')), read('config.json').toString('utf8'));
  const tok = loadCharTokenizer(read('tokenizer.json').toString('utf8'));
  return { ck, tok };
}
