// The inspector slice: which rollout step of the viewed run is inspected, what the tokens are coloured by, whether
// it lists the sampled groups' tokens or every group of the step in brief (sorted by reward), and the sampled groups
// fetched from the worker (a bounded cache, newest kept).

import type { GroupRecord, GroupSummary } from '../../schema/stream';
import type { TokenTexts } from '../../worker/protocol';
import type { ColorQuantity } from '../explain';
import type { LabSlice } from '../slice';

/** Sampled groups kept on the page (runs x steps); the oldest go first. */
const MAX_ROLLOUT_ENTRIES = 48;

/** Key of a run's step in the rollout cache. */
export const rolloutKey = (runId: string, step: number) => `${runId}@${step}`;

export interface InspectorState {
  /** Rollout step shown (null: the latest of the viewed run). */
  inspectStep: number | null;
  /** Sampled groups by rolloutKey, with every group of the step in brief where the run recorded it. */
  rollouts: Record<string, { groups: GroupRecord[]; texts: TokenTexts; batch?: GroupSummary[] }>;
  colorBy: ColorQuantity;
  /** 'tokens': the sampled groups token by token; 'all': every group of the step, completions sorted by reward. */
  inspectView: InspectView;
}

/** What the inspector lists. */
export type InspectView = 'tokens' | 'all';

export interface InspectorActions {
  setInspectStep(step: number | null): void;
  setColorBy(q: ColorQuantity): void;
  setInspectView(v: InspectView): void;
  /** Asks the worker for a step's groups unless they are here already. */
  requestRollouts(runId: string, step: number): void;
  cacheRollouts(runId: string, step: number, groups: GroupRecord[], texts: TokenTexts, batch?: GroupSummary[]): void;
}

export type InspectorSlice = InspectorState & InspectorActions;

export const inspectorSlice: LabSlice<InspectorSlice> =
  ({ link }) =>
  (set, get) => ({
    inspectStep: null,
    rollouts: {},
    colorBy: 'advantage',
    inspectView: 'tokens',

    setInspectStep(step) {
      set({ inspectStep: step });
    },

    setColorBy(colorBy) {
      set({ colorBy });
    },

    setInspectView(inspectView) {
      set({ inspectView });
    },

    requestRollouts(runId, step) {
      if (get().rollouts[rolloutKey(runId, step)]) return;
      link.send({ type: 'load-rollouts', runId, step });
    },

    cacheRollouts(runId, step, groups, texts, batch) {
      const key = rolloutKey(runId, step);
      const kept = Object.entries(get().rollouts)
        .filter(([k]) => k !== key)
        .slice(-(MAX_ROLLOUT_ENTRIES - 1));
      set({ rollouts: Object.fromEntries([...kept, [key, { groups, texts, ...(batch && { batch }) }]]) });
    },
  });
