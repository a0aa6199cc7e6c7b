// The config slice: the experiment being edited (preset, raw field values and their check, backend), a shared
// link's config read at startup (its good fields kept, its bad ones named, a checkpoint on another site held back
// until the person confirms its origin, and only when the page may connect there at all; the lesson it opens), the
// hub origins this build allows, and the shipped warm-start checkpoints. Edits validate per field as they are made;
// nothing here talks to the engine.

import { foreignCheckpointOrigin } from '../../schema/checkpoint-path';
import type { BackendKind, RunHeader } from '../../schema/run-types';
import { hubSourcesAllow, pageHubSources } from '../../schema/hub-origins';
import { FIRST_LESSON, lessonRunOverrides } from '../../lessons';
import { openingLessonId } from '../../lessons/opening';
import {
  configFromUrlParamsKeeping,
  resolveConfig,
  summarizeProblems,
  type PresetName,
  type RLConfig,
  type RLField,
} from '../../schema/config';
import { clipText } from '../../schema/fields';
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

/** Page parameters that are not config fields (?lesson=<id> opens a lesson). */
export const PAGE_PARAMS = ['selftest', 'bench', 'lesson'] as const;

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
  /** What of the link's config could not be used (summarized: the first problems and a count of the rest). */
  urlError: string | null;
  /**
   * What urlError is made of: the link's problems ("field: why" where a field is named) and the fields left at the
   * preset's values. Editing such a field settles its problems: they leave the notice, which closes when none is left.
   */
  linkProblems: { problems: readonly string[]; dropped: readonly string[] };
  /**
   * A link's checkpoint on another site, held back (not in the draft, never fetched) until confirmed; `reachable`
   * is false where the page's Content-Security-Policy lets it connect nowhere there (not one of `hubOrigins`).
   */
  linkCheckpoint: { checkpoint: string; origin: string; reachable: boolean } | null;
  /** The connect sources of hubs this build allows (src/schema/hub-origins.ts), the same list as its CSP's connect-src. */
  hubOrigins: readonly string[];
  warmStarts: WarmStart[];
}

export interface ConfigActions {
  /**
   * Reads the config from a URL query (a shared link) on the page at `site` (its base URL): the good fields are
   * used, the bad ones named in urlError; a checkpoint on another origin waits in linkCheckpoint.
   */
  initConfig(search: string, site?: string): void;
  dismissUrlError(): void;
  /** Uses the link's checkpoint from another site, as the person confirmed on the page. */
  confirmLinkCheckpoint(): void;
  /** Leaves the link's checkpoint from another site out for good. */
  refuseLinkCheckpoint(): void;
  loadWarmStarts(): Promise<void>;
  setField(field: RLField, value: unknown): void;
  applyPreset(preset: PresetName | null): void;
  /** A task and its warm start (if one is shipped), at the warm start's difficulty. */
  setTask(task: string): void;
  setBackend(b: BackendKind): void;
  /** Edits a saved run's experiment: its config, preset and backend. */
  editRunConfig(h: RunHeader): void;
  /** Shows a complete config (a lesson's run) as the edited one, with the preset it came from. */
  showConfig(config: RLConfig, preset: PresetName | null): void;
}

export type ConfigSlice = ConfigState & ConfigActions;

/** The page's base URL (its origin and path), or a placeholder outside a browser (tests pass their own). */
function pageSite(): string {
  return typeof location === 'undefined'
    ? 'http://localhost/'
    : new URL(import.meta.env.BASE_URL, location.origin).href;
}

const defaultDraft = (): Record<string, unknown> => ({ ...resolveConfig(LAB_DEFAULT.preset, LAB_DEFAULT.overrides) });

/** A draft and its check, always set together. */
const edited = (draft: Record<string, unknown>) => ({ draft, check: checkDraft(draft) });

/** The link notice of `problems`, `dropped` the fields they left at the preset's values; null with no problem. */
function linkNotice(
  problems: readonly string[],
  dropped: readonly string[],
): Pick<ConfigState, 'urlError' | 'linkProblems'> {
  const kept =
    dropped.length > 5 ? `${dropped.slice(0, 5).join(', ')} and ${dropped.length - 5} more` : dropped.join(', ');
  const urlError = problems.length
    ? `The link's config is used except for what is named below${dropped.length ? ` (${kept} stay at the preset's values)` : ''}.\n${summarizeProblems(problems)}`
    : null;
  return { urlError, linkProblems: { problems, dropped } };
}

export const configSlice: LabSlice<ConfigSlice> = () => (set, get) => ({
  preset: LAB_DEFAULT.preset,
  ...edited(defaultDraft()),
  backend: 'webgpu',
  ...linkNotice([], []),
  linkCheckpoint: null,
  hubOrigins: pageHubSources(),
  warmStarts: [],

  initConfig(search, site = pageSite()) {
    const params = new URLSearchParams(search);
    // No link at all: the page opens on the first lesson's question (its run is the default config).
    const lesson = openingLessonId(search);
    if (lesson !== null) get().openLesson(lesson);
    for (const p of PAGE_PARAMS) params.delete(p);
    if ([...params.keys()].length === 0) return;
    const { config, preset, problems, dropped } = configFromUrlParamsKeeping(params);
    const draft: Record<string, unknown> = { ...config };
    let linkCheckpoint: ConfigState['linkCheckpoint'] = null;
    const origin = config.checkpoint === null ? null : foreignCheckpointOrigin(config.checkpoint, site);
    if (config.checkpoint !== null && origin !== null) {
      // Held back: the worker fetches only what is in the draft, so nothing is read from that origin unless confirmed.
      linkCheckpoint = { checkpoint: config.checkpoint, origin, reachable: hubSourcesAllow(get().hubOrigins, origin) };
      draft.checkpoint = resolveConfig(preset).checkpoint;
    }
    // A reward model is fetched and run like a checkpoint; a link may name only this site's (typed by hand, any works).
    const rewardOrigin = config.reward_model === null ? null : foreignCheckpointOrigin(config.reward_model, site);
    if (config.reward_model !== null && rewardOrigin !== null) {
      problems.push(
        `reward_model: ${clipText(config.reward_model)} is on ${rewardOrigin}, not this site; a link may name only this site's reward models, so it is not used (type it into the field to use it)`,
      );
      dropped.push('reward_model');
      draft.reward_model = resolveConfig(preset).reward_model;
    }
    set({ ...edited(draft), preset, ...linkNotice(problems, dropped), linkCheckpoint });
  },

  dismissUrlError() {
    set(linkNotice([], []));
  },

  confirmLinkCheckpoint() {
    const held = get().linkCheckpoint;
    // The browser would refuse the connection: nothing to confirm (the notice offers no button then).
    if (!held?.reachable) return;
    set({ ...edited({ ...get().draft, checkpoint: held.checkpoint }), linkCheckpoint: null });
  },

  refuseLinkCheckpoint() {
    set({ linkCheckpoint: null });
  },

  async loadWarmStarts() {
    try {
      const r = await fetch(`${import.meta.env.BASE_URL}checkpoints/manifest.json`);
      if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
      const m = (await r.json()) as {
        checkpoints?: { task: string; difficulty: number; path: string; heldout_greedy_accuracy: number }[];
      };
      const warmStarts = (m.checkpoints ?? []).map((c) => ({
        name: c.path.replace(/^checkpoints\//, ''),
        task: c.task,
        difficulty: c.difficulty,
        accuracy: c.heldout_greedy_accuracy,
      }));
      set({ warmStarts });
    } catch (e) {
      get().addNotice(
        'warning',
        `The list of warm-start checkpoints could not be read (${e instanceof Error ? e.message : String(e)}); fresh models still work.`,
      );
    }
  },

  setField(field, value) {
    const { problems, dropped } = get().linkProblems;
    // The person has answered the link's problem with this field: the notice stops naming it.
    const named = dropped.includes(field) || problems.some((p) => p.startsWith(`${field}:`));
    const settled = named
      ? linkNotice(
          problems.filter((p) => !p.startsWith(`${field}:`)),
          dropped.filter((f) => f !== field),
        )
      : {};
    set({ ...edited({ ...get().draft, [field]: value }), ...settled });
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

  showConfig(config, preset) {
    set({ ...edited({ ...config }), preset });
  },
});
