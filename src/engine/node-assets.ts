// The site's files read from the repository's public/ folder in Node: the AssetLoader that loadStartPolicy takes
// in the CLI and the tests (the worker reads the same paths with fetch). Node only.

import { readFileSync } from 'node:fs';
import type { AssetLoader } from './start-policy';

/** public/ of this checkout. */
export const PUBLIC_DIR = new URL('../../public/', import.meta.url);

/** Reads `path` (relative to the site's root, e.g. "checkpoints/copy/config.json") from public/. */
export const PUBLIC_ASSETS: AssetLoader = {
  bytes: async (path) => new Uint8Array(readFileSync(new URL(path, PUBLIC_DIR))),
  text: async (path) => readFileSync(new URL(path, PUBLIC_DIR), 'utf8'),
};
