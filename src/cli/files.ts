// Node-side files: checkpoint directories (model.safetensors + config.json + tokenizer.json, or any Hugging Face
// model folder with shards, tokenizer_config.json and generation_config.json), the trainer state beside them, and the char tokenizer shipped in public/. Every file error names its path and a plain reason
// (FileError); every write is atomic (temporary file in the same directory, fsync, rename). The browser stores
// the same bytes in IndexedDB instead.

import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { encodeCheckpoint, type Checkpoint } from '../io/checkpoint';
import { loadHfFolder, unusableCheckpointProblems } from '../io/hf-folder';
import { loadCharTokenizer, type Tokenizer } from '../io/tokenizer';
import { PUBLIC_ASSETS, PUBLIC_DIR } from '../engine/node-assets';
import { CHAR_TOKENIZER_PATH, type AssetLoader } from '../engine/start-policy';

export { PUBLIC_ASSETS, PUBLIC_DIR, unusableCheckpointProblems };

/** The file names of a checkpoint directory and of the trainer state saved beside it. */
export const CHECKPOINT_FILES = ['model.safetensors', 'config.json', 'tokenizer.json'] as const;
export const TRAINER_STATE_FILE = 'trainer_state.safetensors';

const REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory, not a file',
  ENOTDIR: 'a part of the path is a file, not a directory',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  EEXIST: 'already exists',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'the name is too long',
};

/**
 * A file operation that failed: the path, what was being done and a plain reason (the errno code kept in `code`).
 * `input`: the file was being read (the CLI's input cannot be used) rather than written.
 */
export class FileError extends Error {
  override name = 'FileError';
  readonly input: boolean;
  constructor(
    readonly path: string,
    readonly doing: string,
    readonly code: string | undefined,
    reason: string,
  ) {
    super(`${path}: cannot ${doing}: ${reason}`);
    this.input = doing.startsWith('read');
  }
}

/** Runs one fs call on `path`; an fs error becomes a FileError naming the path and a plain reason. */
export function onFile<T>(path: string | URL, doing: string, op: () => T): T {
  try {
    return op();
  } catch (e) {
    if (e instanceof FileError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const shown = path instanceof URL ? decodeURIComponent(path.pathname) : path;
    throw new FileError(shown, doing, code, (code && REASONS[code]) ?? (e as Error).message);
  }
}

export function readFileOrFail(path: string | URL): Buffer {
  return onFile(path, 'read it', () => readFileSync(path));
}

/**
 * An AssetLoader over the file system for the CLI: a path is read as given (relative to the working directory);
 * a relative path that does not exist there is read from public/, so a site path such as
 * models/sentiment-char/config.json works in the CLI as in the page.
 */
export const CLI_ASSETS: AssetLoader = {
  bytes: async (path) => new Uint8Array(readFileOrFail(cliAssetPath(path))),
  text: async (path) => readFileOrFail(cliAssetPath(path)).toString('utf8'),
};

function cliAssetPath(path: string): string | URL {
  if (existsSync(path) || isAbsolute(path)) return path;
  const shipped = new URL(path, PUBLIC_DIR);
  return existsSync(shipped) ? shipped : path;
}

export function mkdirOrFail(dir: string): void {
  onFile(dir, 'create the directory', () => mkdirSync(dir, { recursive: true }));
}

/** The temporary name a file is written under before it is renamed into place (same directory, so rename is atomic). */
function temporaryOf(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}`);
}

/** Writes `data` to a temporary file beside `path` and fsyncs it; the caller renames it into place. */
function writeTemporary(path: string, data: Uint8Array | string): string {
  const tmp = temporaryOf(path);
  onFile(path, `write it (through ${basename(tmp)})`, () => {
    const fd = openSync(tmp, 'w');
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  });
  return tmp;
}

/** Makes the renames in `dir` durable (best effort: some file systems cannot fsync a directory). */
function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // The data is already on disk; only the rename's durability across a power cut depends on this.
  }
}

/**
 * Writes several files so that each is either its old or its new version, never partial: every file goes to a
 * temporary first (a failure, e.g. ENOSPC, removes the temporaries and leaves every old file as it was), then
 * they are renamed into place in the order given, so the last one named is the last to change.
 */
export function writeFilesAtomic(files: readonly (readonly [path: string, data: Uint8Array | string])[]): void {
  const temporaries: [string, string][] = [];
  try {
    for (const [path, data] of files) temporaries.push([writeTemporary(path, data), path]);
  } catch (e) {
    const cleanup = [...temporaries.map(([tmp]) => tmp), temporaryOf(files[temporaries.length][0])];
    for (const tmp of cleanup) {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // Nothing to remove where the temporary could not be made (e.g. its directory is missing).
      }
    }
    if (e instanceof FileError) e.message += '; nothing was replaced: the files there are as they were';
    throw e;
  }
  for (const [tmp, path] of temporaries) onFile(path, 'replace it', () => renameSync(tmp, path));
  for (const dir of new Set(files.map(([p]) => dirname(p)))) syncDirectory(dir);
}

export function writeFileAtomic(path: string, data: Uint8Array | string): void {
  writeFilesAtomic([[path, data]]);
}

export function loadCharTokenizerFile(): { tok: Tokenizer; json: string } {
  const json = readFileOrFail(new URL(CHAR_TOKENIZER_PATH, PUBLIC_DIR)).toString('utf8');
  return { tok: loadCharTokenizer(json), json };
}

/**
 * The files of a checkpoint directory, encoded: [path, bytes] in the order they are renamed into place. A BPE
 * tokenizer's tokenizer_config.json (its special tokens and chat template) is written beside tokenizer.json.
 */
export function checkpointFiles(
  dir: string,
  ck: Checkpoint,
  tokenizerJson: string,
  tokenizerConfigJson: string | null = null,
): [string, Uint8Array | string][] {
  const { safetensors, configJson } = encodeCheckpoint(ck);
  return [
    ...(tokenizerConfigJson === null
      ? []
      : [[join(dir, 'tokenizer_config.json'), tokenizerConfigJson] as [string, string]]),
    [join(dir, 'tokenizer.json'), tokenizerJson],
    [join(dir, 'config.json'), configJson],
    [join(dir, 'model.safetensors'), safetensors],
  ];
}

export function saveCheckpointDir(
  dir: string,
  ck: Checkpoint,
  tokenizerJson: string,
  tokenizerConfigJson: string | null = null,
): void {
  mkdirOrFail(dir);
  writeFilesAtomic(checkpointFiles(dir, ck, tokenizerJson, tokenizerConfigJson));
}

/** A checkpoint directory read back: the checkpoint, its tokenizer, and the tokenizer files to save with it. */
export interface LoadedCheckpointDir {
  ck: Checkpoint;
  tok: Tokenizer;
  tokenizerJson: string;
  tokenizerConfigJson: string | null;
}

/**
 * Reads a checkpoint directory: the lab's own (model.safetensors, config.json, tokenizer.json) or any Hugging Face
 * Llama/Qwen2 folder (shards with model.safetensors.index.json, a BPE tokenizer.json with tokenizer_config.json and
 * generation_config.json; src/io/hf-folder.ts). A missing file fails as a FileError with its path; a malformed
 * or unusable one with the directory and the file named, keeping its class (CheckpointError, SafetensorsError,
 * TokenizerError), so the CLI's exit code says "refused input".
 */
export async function loadCheckpointDir(dir: string): Promise<LoadedCheckpointDir> {
  const holds = `a checkpoint directory holds ${CHECKPOINT_FILES.join(', ')}`;
  if (!existsSync(dir))
    throw new FileError(dir, 'read the checkpoint directory', 'ENOENT', `${REASONS.ENOENT} (${holds})`);
  const read = {
    bytes: async (name: string) => new Uint8Array(readFileOrFail(join(dir, name))),
    text: async (name: string) => readFileOrFail(join(dir, name)).toString('utf8'),
  };
  try {
    const folder = await loadHfFolder(read);
    return {
      ck: folder.ck,
      tok: folder.tokenizer,
      tokenizerJson: folder.tokenizerJson,
      tokenizerConfigJson: folder.tokenizerConfigJson,
    };
  } catch (e) {
    if (e instanceof FileError) e.message = `${e.message} (${holds})`;
    else if (e instanceof Error) e.message = `checkpoint ${dir}: ${e.message}`;
    throw e;
  }
}
