// The config slice: the experiment being edited (preset, raw field values and their check, backend), a shared
// link's config read at startup, and the shipped warm-start checkpoints. Edits validate per field as they are
// made; nothing here talks to the engine.

import type { BackendKind, RunHeader } from '../../engine/types';
import { FIRST_LESSON, lessonRunOverrides } from '../../lessons';
import { configFromUrlParams, isPresetName, resolveConfig, type PresetName, type RLConfig, type RLField } from '../../rl/config';
import { checkDraft, switchPreset, type DraftCheck } from '../config-diff';
import type { LabSlice } from '../slice';

/**
 * The lab's starting experiment (the page with no link): the run of the first lesson, "Your first RL run", so the
 * page opens on an experiment that visibly learns and the lesson and the default are one definition.
 */
export const LAB_DEFAULT: { preset: PresetName; overrides: Partial<RLConfig> } = {
  preset: FIRST_LESSON.runs[0].preset,
  overrides: lessonRunOverrides(FIRST_LESSON, FIRST_LESSON.runs[0]),
};

/** Page parameters that are not config fields. */
export const PAGE_PARAMS = ['selftest', 'bench'] as const;

/** A shipped warm-start checkpoint (public/checkpoints/manifest.json). */
export interface WarmStart {
  /** The `checkpoint` value that selects it. */
  name: string;
  task: string;
  difficulty: number;
  accuracy: number;
}

export interface ConfigState {
  preset: PresetName | null;
  /** The config being edited; fields may hold raw values that do not validate yet. */
  draft: Record<string, unknown>;
  check: DraftCheck;
  backend: BackendKind;
  /** Why the link's config could not be used (the page then shows the defaults). */
  urlError: string | null;
  warmStarts: WarmStart[];
}

export interface ConfigActions {
  /** Reads the config from a URL query (a shared link); a bad one leaves the defaults and a message. */
  initConfig(search: string): void;
  loadWarmStarts(): Promise<void>;
  setField(field: RLField, value: unknown): void;
  applyPreset(preset: PresetName | null): void;
  /** A task and its warm start (if one is shipped), at the warm start's difficulty. */
  setTask(task: string): void;
  setBackend(b: BackendKind): void;
  /** Edits a saved run's experiment: its config, preset and backend. */
  editRunConfig(h: RunHeader): void;
}

export type ConfigSlice = ConfigState & ConfigActions;

const defaultDraft = (): Record<string, unknown> => ({ ...resolveConfig(LAB_DEFAULT.preset, LAB_DEFAULT.overrides) });

/** A draft and its check, always set together. */
const edited = (draft: Record<string, unknown>) => ({ draft, check: checkDraft(draft) });

export const configSlice: LabSlice<ConfigSlice> = () => (set, get) => ({
  preset: LAB_DEFAULT.preset,
  ...edited(defaultDraft()),
  backend: 'webgpu',
  urlError: null,
  warmStarts: [],

  initConfig(search) {
    const params = new URLSearchParams(search);
    for (const p of PAGE_PARAMS) params.delete(p);
    if ([...params.keys()].length === 0) return;
    try {
      const config = configFromUrlParams(params);
      const p = params.get('preset');
      set({ ...edited({ ...config }), preset: p !== null && isPresetName(p) ? p : null, urlError: null });
    } catch (e) {
      set({ urlError: `The link's config could not be used, so the page shows the defaults instead. ${e instanceof Error ? e.message : String(e)}` });
    }
  },

  async loadWarmStarts() {
    try {
      const r = await fetch(`${import.meta.env.BASE_URL}checkpoints/manifest.json`);
      if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
      const m = (await r.json()) as { checkpoints?: { task: string; difficulty: number; path: string; heldout_greedy_accuracy: number }[] };
      const warmStarts = (m.checkpoints ?? []).map((c) => ({ name: c.path.replace(/^checkpoints\//, ''), task: c.task, difficulty: c.difficulty, accuracy: c.heldout_greedy_accuracy }));
      set({ warmStarts });
    } catch (e) {
      get().addNotice('warning', `The list of warm-start checkpoints could not be read (${e instanceof Error ? e.message : String(e)}); fresh models still work.`);
    }
  },

  setField(field, value) {
    set(edited({ ...get().draft, [field]: value }));
  },

  applyPreset(preset) {
    set({ preset, ...edited(switchPreset(get().draft, preset)) });
  },

  setTask(task) {
    const ws = get().warmStarts.find((w) => w.task === task);
    set(edited({ ...get().draft, task, checkpoint: ws ? ws.name : null, difficulty: ws ? ws.difficulty : null }));
  },

  setBackend(backend) {
    set({ backend });
  },

  editRunConfig(h) {
    set({ ...edited({ ...h.config }), preset: h.preset, backend: h.backend });
  },
});
