// Model folders picked from disk: the page reads the files a model folder needs (config, weights or shards,
// tokenizer files, an ONNX file), hands them to the engine worker, which keeps them in IndexedDB as local/<name>/,
// and the field that asked (checkpoint or reward_model) then names that path, so the run reads the folder like a
// shipped one, also after a reload. Not the folder store itself (src/engine/idb-folder-store.ts).

import { isModelFile } from '../../schema/folder-names';
import type { ReplyOf } from '../../worker/protocol';
import type { LabSlice } from '../slice';

/** The config fields a folder can be picked for. */
export type FolderField = 'checkpoint' | 'reward_model';

/** A picked file: its path from the picked folder down (webkitRelativePath) and its bytes. */
export interface PickedFile {
  relativePath: string;
  arrayBuffer(): Promise<ArrayBuffer>;
}

export interface FolderImport {
  field: FolderField;
  /** The picked folder's own name. */
  name: string;
  status: 'reading' | 'saving' | 'done' | 'failed';
  /** The files kept (done) or why it failed. */
  files?: string[];
  message?: string;
}

export interface FoldersState {
  folderImport: FolderImport | null;
}

export interface FoldersActions {
  /** Reads the model files of a picked folder and has the worker keep them; the field names the folder once saved. */
  importFolder(field: FolderField, files: readonly PickedFile[]): Promise<void>;
  /** The answer to import request `id`: where the folder is kept and its files. */
  folderImported(id: number, r: Pick<ReplyOf<'import-folder'>, 'path' | 'files'>): void;
  folderImportFailed(id: number, message: string): void;
}

export type FoldersSlice = FoldersState & FoldersActions;

/** The folder's name and each file's path inside it, from paths like "tiny-qwen2/config.json". */
export function splitPickedPaths(paths: readonly string[]): { name: string; inside: string[] } {
  const first = paths.find((p) => p.includes('/'))?.split('/')[0] ?? 'folder';
  return { name: first, inside: paths.map((p) => (p.startsWith(`${first}/`) ? p.slice(first.length + 1) : p)) };
}

export const foldersSlice: LabSlice<FoldersSlice> =
  ({ link }) =>
  (set, get) => {
    let nextId = 1;
    let pending: { id: number; field: FolderField } | null = null;
    return {
      folderImport: null,

      async importFolder(field, files) {
        const { name, inside } = splitPickedPaths(files.map((f) => f.relativePath));
        const keep = files.map((f, i) => ({ f, path: inside[i] })).filter(({ path }) => isModelFile(path));
        if (!keep.some(({ path }) => path === 'config.json')) {
          set({
            folderImport: {
              field,
              name,
              status: 'failed',
              message: `${name} has no config.json at its top: pick the model's own folder (config.json, model.safetensors or onnx/model.onnx, tokenizer.json)`,
            },
          });
          return;
        }
        set({ folderImport: { field, name, status: 'reading' } });
        const read = await Promise.all(
          keep.map(async ({ f, path }) => ({ path, bytes: new Uint8Array(await f.arrayBuffer()) })),
        );
        const id = nextId++;
        pending = { id, field };
        set({ folderImport: { field, name, status: 'saving' } });
        link.request({ type: 'import-folder', name, files: read }).then(
          (r) => get().folderImported(id, r),
          (e: unknown) => get().folderImportFailed(id, e instanceof Error ? e.message : String(e)),
        );
      },

      folderImported(id, r) {
        if (!pending || id !== pending.id) return;
        const field = pending.field;
        pending = null;
        const name = get().folderImport?.name ?? r.path;
        set({ folderImport: { field, name, status: 'done', files: r.files } });
        get().setField(field, r.path);
      },

      folderImportFailed(id, message) {
        if (!pending || id !== pending.id) return;
        const current = get().folderImport;
        pending = null;
        set({ folderImport: current ? { ...current, status: 'failed', message } : null });
      },
    };
  };
