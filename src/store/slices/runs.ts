// The runs slice: the saved runs (IndexedDB, in the worker) and the storage they use, deleting, exporting and
// importing them, and the files of an export waiting to be saved by the page. Ids of exports count per store.
// An export's files and an import's run (or its error) come back as the answer to that very request.

import type { DownloadFile, ExportKind } from '../../engine/lab-engine';
import type { RunHeader } from '../../schema/run-types';
import { runExports } from '../selectors';
import type { LabSlice } from '../slice';

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

export interface RunsState {
  runs: RunHeader[];
  storage: { usage: number; quota: number } | null;
  persistent: boolean;
  importError: string | null;
  lastImported: RunHeader | null;
  /** Files to download (the page saves them and clears this); `id` tells one export from the next. */
  downloads: { id: number; files: DownloadFile[] } | null;
}

export interface RunsActions {
  setRuns(runs: RunHeader[], storage: RunsState['storage'], persistent: boolean): void;
  deleteRun(runId: string): void;
  exportRun(runId: string, kind: ExportKind): void;
  offerDownloads(files: DownloadFile[]): void;
  clearDownloads(): void;
  importFile(fileName: string, text: string): void;
  importDone(header: RunHeader): void;
  importFailed(message: string): void;
  /** Gives a saved run a name (empty: its default name back); a refused name becomes a notice. */
  renameRun(runId: string, name: string): void;
}

export type RunsSlice = RunsState & RunsActions;

export const runsSlice: LabSlice<RunsSlice> =
  ({ link }) =>
  (set, get) => {
    let lastDownloadId = 0;
    return {
      runs: [],
      storage: null,
      persistent: false,
      importError: null,
      lastImported: null,
      downloads: null,

      setRuns(runs, storage, persistent) {
        set({ runs, storage, persistent });
      },

      deleteRun(runId) {
        link.send({ type: 'delete-run', runId });
        get().forgetRun(runId);
      },

      exportRun(runId, kind) {
        // The same rule the runs list renders its buttons from: a run is asked only for what it can give.
        const h = get().runs.find((r) => r.id === runId);
        if (h && !runExports(get(), h).includes(kind)) {
          get().addNotice(
            'warning',
            `"${h.name}" has no ${kind} export: ${h.status === 'imported' ? 'an imported run has its metrics only' : 'no trainer state is saved yet'}.`,
          );
          return;
        }
        link.request({ type: 'export', runId, kind }).then(
          (r) => get().offerDownloads(r.files),
          (e: unknown) => get().addNotice('error', messageOf(e)),
        );
      },

      offerDownloads(files) {
        set({ downloads: { id: ++lastDownloadId, files } });
      },

      clearDownloads() {
        set({ downloads: null });
      },

      importFile(fileName, text) {
        set({ importError: null });
        link.request({ type: 'import', fileName, text }).then(
          (r) => get().importDone(r.header),
          (e: unknown) => get().importFailed(messageOf(e)),
        );
      },

      importDone(header) {
        set({ lastImported: header, importError: null });
      },

      importFailed(message) {
        set({ importError: message });
      },

      renameRun(runId, name) {
        link
          .request({ type: 'rename-run', runId, name })
          .catch((e: unknown) =>
            get().addNotice('error', `Could not rename the run: ${messageOf(e)}`, `rename ${runId}`),
          );
      },
    };
  };
