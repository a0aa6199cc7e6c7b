// The hub slice: models from a Hugging Face-style hub in the page. The endpoint (hf_endpoint, like HF_ENDPOINT),
// the check of a typed id (its small files, fetched only when the person presses Check), the confirmed download
// with its progress per file, pause and resume, the models the browser keeps with the storage quota, and whether a
// token was given. The token itself goes to the engine worker's memory and is never held here, in a link, a saved
// run or the page's storage. Nothing here fetches by itself: a shared link only fills the model field.

import type { HubCheck, HubProgress, KeptModel } from '../../hub/manager-types';
import { parseEndpoint, parseHubId } from '../../schema/hub-id';
import { SETTINGS, resolveConfig } from '../../schema/config';
import type { HubModels } from '../../worker/protocol';
import { readStored, writeStored, type LabSlice } from '../slice';

/** The Hugging Face Hub, the endpoint when none is set (as huggingface_hub's default; the setting's, SETTINGS). */
export const DEFAULT_HF_ENDPOINT = SETTINGS.hf_endpoint.default;
/** Where the page keeps the endpoint the person set (not a secret; the token is never stored). */
const ENDPOINT_KEY = SETTINGS.hf_endpoint.storageKey;

export interface HubCheckState {
  model: string;
  status: 'checking' | 'checked' | 'failed';
  check: HubCheck | null;
  message: string | null;
}

export interface HubState {
  hubEndpoint: string;
  /** True while the worker holds a token (its value stays there). */
  hubTokenSet: boolean;
  hubCheck: HubCheckState | null;
  /** The last progress of each download of this visit, by model. */
  hubDownloads: Record<string, HubProgress>;
  hubKept: KeptModel[];
  hubStorage: HubModels['storage'];
  hubPersistent: boolean;
  /** Why the kept models could not be listed (no origin-private storage here, a file in use), or null. */
  hubListError: string | null;
}

export interface HubActions {
  setHubEndpoint(endpoint: string): void;
  /** Hands the token to the worker's memory (empty or null forgets it). */
  setHubToken(token: string | null): void;
  /** Fetches `model`'s small files and checks them against the edited config; no weight is fetched. */
  checkHubModel(model: string): Promise<void>;
  /** Downloads (or resumes) `model`'s weights, as the person confirmed. */
  downloadHubModel(model: string): Promise<void>;
  pauseHubDownload(model: string): void;
  refreshHubModels(): Promise<void>;
  deleteHubModel(model: string): Promise<void>;
  /** Asks the browser to keep this site's storage under pressure (navigator.storage.persist). */
  persistStorage(): Promise<void>;
  hubProgressed(progress: HubProgress): void;
}

export type HubSlice = HubState & HubActions;

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Why `endpoint` cannot be used, or null. */
export function endpointProblem(endpoint: string): string | null {
  try {
    parseEndpoint(endpoint);
    return null;
  } catch (e) {
    return messageOf(e);
  }
}

export const hubSlice: LabSlice<HubSlice> =
  ({ link, storage }) =>
  (set, get) => {
    const models = (r: HubModels) => set({ hubKept: r.models, hubStorage: r.storage, hubPersistent: r.persistent });
    return {
      hubEndpoint: readStored(storage, ENDPOINT_KEY) || DEFAULT_HF_ENDPOINT,
      hubTokenSet: false,
      hubCheck: null,
      hubDownloads: {},
      hubKept: [],
      hubStorage: null,
      hubPersistent: false,
      hubListError: null,

      setHubEndpoint(endpoint) {
        set({ hubEndpoint: endpoint, hubCheck: null });
        if (endpointProblem(endpoint) === null) writeStored(storage, ENDPOINT_KEY, endpoint);
      },

      setHubToken(token) {
        const value = token && token.trim() !== '' ? token.trim() : null;
        set({ hubTokenSet: value !== null });
        void link.request({ type: 'hub-token', token: value }).catch(() => {});
      },

      async checkHubModel(model) {
        try {
          parseHubId(model);
        } catch (e) {
          set({ hubCheck: { model, status: 'failed', check: null, message: messageOf(e) } });
          return;
        }
        set({ hubCheck: { model, status: 'checking', check: null, message: null } });
        const config = get().check.config ?? resolveConfig(get().preset);
        try {
          const r = await link.request({ type: 'hub-check', model, endpoint: get().hubEndpoint, config });
          if (get().hubCheck?.model === model)
            set({ hubCheck: { model, status: 'checked', check: r.check, message: null } });
        } catch (e) {
          if (get().hubCheck?.model === model)
            set({ hubCheck: { model, status: 'failed', check: null, message: messageOf(e) } });
        }
        void get().refreshHubModels();
      },

      async downloadHubModel(model) {
        try {
          await link.request({ type: 'hub-download', model, endpoint: get().hubEndpoint });
        } catch {
          // The last hub-progress names the pause or the failure.
        }
        await get().refreshHubModels();
      },

      pauseHubDownload(model) {
        void link.request({ type: 'hub-cancel', model }).catch(() => {});
      },

      async refreshHubModels() {
        try {
          models(await link.request({ type: 'hub-list' }));
        } catch (e) {
          set({ hubListError: messageOf(e) });
        }
      },

      async deleteHubModel(model) {
        try {
          models(await link.request({ type: 'hub-delete', model }));
          const { [model]: _, ...rest } = get().hubDownloads;
          set({ hubDownloads: rest });
        } catch (e) {
          get().addNotice('error', `Could not delete ${model}: ${messageOf(e)}`);
        }
      },

      async persistStorage() {
        const granted = await (navigator.storage?.persist?.() ?? Promise.resolve(false)).catch(() => false);
        if (!granted)
          get().addNotice(
            'warning',
            'The browser did not grant persistent storage: it may clear kept models when the disk runs low.',
          );
        await get().refreshHubModels();
      },

      hubProgressed(progress) {
        set({ hubDownloads: { ...get().hubDownloads, [progress.model]: progress } });
      },
    };
  };
