// The names of imported model folders: the `local/<name>/` prefix a run's path uses, which files of a picked folder
// are kept, and the folder name made path-safe. Pure, so the page filters a picked folder without the IndexedDB
// store (idb-folder-store.ts, in the worker) that keeps it.

/** The path prefix of imported folders: `local/<name>/<file>`. */
export const LOCAL_FOLDER_PREFIX = 'local/';

/** The files of a folder that a model folder can need; anything else in a picked folder is not kept. */
export function isModelFile(path: string): boolean {
  return /^(config\.json|generation_config\.json|tokenizer\.json|tokenizer_config\.json|model\.safetensors|model-\d{5}-of-\d{5}\.safetensors|model\.safetensors\.index\.json|onnx\/model\.onnx)$/.test(
    path,
  );
}

/** A folder name usable in a path: what the person's folder is called, other characters as '-'. */
export function localFolderName(name: string): string {
  const clean = name
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[.-]+|-+$/g, '')
    .slice(0, 64);
  return clean || 'folder';
}
