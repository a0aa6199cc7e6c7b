// The objective A/B slice: objective B being set up (a preset applied to the current run's config, or that config,
// then knobs edited and checked like the config panel's draft), which batch to compare on, the request in flight,
// and the last comparison with its explanation (src/schema/compare-explain.ts). A is always the current run's objective.

import type { CompareSource, ObjectiveComparison } from '../../rl/observation/compare';
import { explainComparison, type ComparisonExplanation } from '../../schema/compare-explain';
import {
  derive,
  FIELD_NAMES,
  FIELD_SECTIONS,
  PRESET_INFO,
  sameValue,
  type PresetName,
  type RLConfig,
  type RLField,
} from '../../schema/config';
import { OBJECTIVE_FIELDS } from '../../schema/objective';
import type { ReplyOf } from '../../worker/protocol';
import { checkDraft, switchPreset, type DraftCheck } from '../config-diff';
import type { LabSlice } from '../slice';

/** The knobs B can change: those that make the objective (advantages, policy loss, KL and entropy terms) and the loss mask. */
export const COMPARE_FIELDS: readonly RLField[] = [
  ...FIELD_SECTIONS.advantage,
  ...(Object.keys(OBJECTIVE_FIELDS) as RLField[]),
  'mask_truncated_completions',
];

/** A comparison as the page keeps it. */
export interface ComparisonView {
  /** The request's id (a new comparison is a new view). */
  id: number;
  runId: string;
  /** A's and B's names as the panel showed them when the comparison was asked for. */
  labelA: string;
  labelB: string;
  comparison: ObjectiveComparison;
  /** Token texts per completion. */
  texts: string[][];
  explanation: ComparisonExplanation;
}

export interface CompareState {
  compareSource: CompareSource;
  /** The preset B started from; null: the current run's own config. */
  comparePreset: PresetName | null;
  /** B's raw field values (null until B is picked) and their check. */
  compareDraft: Record<string, unknown> | null;
  compareCheck: DraftCheck | null;
  /** The request in flight: its id and the sides' names as the panel showed them, or null. */
  comparePending: { id: number; labelA: string; labelB: string } | null;
  comparison: ComparisonView | null;
  compareError: string | null;
  /** A saved run opened at its saved state (to compare on it), and its step then: until it trains, it keeps no batch. */
  compareOpened: { runId: string; step: number } | null;
}

export interface CompareActions {
  setCompareSource(source: CompareSource): void;
  /** B = `preset` applied to the current run's config (keeping its task, batch sizes, schedule), or that config itself. */
  pickCompareObjective(preset: PresetName | null): void;
  setCompareField(field: RLField, value: unknown): void;
  /** Applies the fix compareDependencyOf offers (B's dependent knob set to what A's batch carries). */
  fixCompareDependency(): void;
  /** Asks the worker for the A/B of the current run and B. */
  runComparison(): void;
  /** The answer to comparison `id` (ignored unless it is the one in flight). */
  receiveComparison(id: number, r: Pick<ReplyOf<'compare-objectives'>, 'runId' | 'comparison' | 'texts'>): void;
  comparisonFailed(id: number, message: string): void;
  /** Opens a saved run at its saved state (a finished one too), without training, to compare objectives on it. */
  openRunToCompare(runId: string): void;
}

export type CompareSlice = CompareState & CompareActions;

/** The current run's header (A's config and preset), when the runs list knows it: the list's own object, so a selector returning it is stable. */
export function currentRunConfig<H extends { id: string; config: RLConfig; preset: PresetName | null }>(s: {
  progress: { runId: string | null };
  runs: readonly H[];
}): H | null {
  return (s.progress.runId ? s.runs.find((r) => r.id === s.progress.runId) : undefined) ?? null;
}

/** The fields where B's draft differs from what its preset made of A's config. */
export function compareEdits(
  a: RLConfig,
  preset: PresetName | null,
  draft: Readonly<Record<string, unknown>>,
): RLField[] {
  const base = switchPreset(a, preset);
  return FIELD_NAMES.filter((f) => !sameValue(draft[f], preset ? base[f] : a[f]));
}

/**
 * B is valid on its own but cannot be evaluated on A's batch because of a knob that depends on what A's run kept (a
 * reference policy, a critic, greedy rollouts, the group size): the reason in words and the one-click fix (B's knob
 * set to what A's batch carries). Null when B fits A's batch. The worker's own check is
 * src/rl/observation/compare.ts comparisonProblem; this says it before the request, with the fix.
 */
export interface CompareDependency {
  field: RLField;
  reason: string;
  fix: Partial<RLConfig>;
}

export function compareDependency(a: RLConfig, b: RLConfig): CompareDependency | null {
  if (derive(b).needsReference && !derive(a).needsReference)
    return {
      field: 'beta',
      reason: `B's beta ${b.beta} adds a KL term, which needs a reference policy's log-probs; run A kept none (its beta is ${a.beta})`,
      fix: { beta: 0 },
    };
  if (b.num_generations !== a.num_generations)
    return {
      field: 'num_generations',
      reason: `B's num_generations ${b.num_generations} differs from the batch's groups of ${a.num_generations}`,
      fix: { num_generations: a.num_generations },
    };
  for (const [estimator, needs] of [
    ['gae', 'a critic'],
    ['remax', 'greedy rollouts'],
  ] as const)
    if (b.adv_estimator === estimator && a.adv_estimator !== estimator)
      return {
        field: 'adv_estimator',
        reason: `B's adv_estimator ${estimator} needs ${needs}, and run A (${a.adv_estimator}) has none`,
        fix: { adv_estimator: a.adv_estimator },
      };
  return null;
}

/** The dependency problem of the B being edited against the current run's config, or null. */
export function compareDependencyOf(s: {
  progress: { runId: string | null };
  runs: readonly { id: string; config: RLConfig; preset: PresetName | null }[];
  compareCheck: DraftCheck | null;
}): CompareDependency | null {
  const a = currentRunConfig(s);
  const b = s.compareCheck?.config;
  return a && b ? compareDependency(a.config, b) : null;
}

/** Why Compare cannot run now (in words), or null when it can. */
export function compareBlocker(
  s: CompareState & {
    progress: { runId: string | null; status: string; step: number };
    runs: readonly { id: string; config: RLConfig; preset: PresetName | null }[];
  },
): string | null {
  if (!s.progress.runId || !currentRunConfig(s))
    return 'start a run, or open a saved one with a saved state: A is its objective';
  if (s.progress.status === 'loading') return 'the run is loading';
  if (s.progress.status !== 'paused' && s.progress.status !== 'done')
    return `the run is ${s.progress.status}: pause it (or let it finish) to compare between steps`;
  if (s.compareSource === 'latest' && s.progress.step === 0)
    return 'the run has no step yet: run one, or compare on a fresh batch';
  if (
    s.compareSource === 'latest' &&
    s.compareOpened?.runId === s.progress.runId &&
    s.compareOpened.step === s.progress.step
  )
    return 'a run opened from its saved state keeps no batch: compare on a fresh batch';
  if (!s.compareDraft || !s.compareCheck) return 'pick objective B';
  if (!s.compareCheck.config) return "B's knobs have an error (named below)";
  const dependency = compareDependencyOf(s);
  if (dependency) return `${dependency.reason} (fix below)`;
  if (s.comparePending) return 'comparing…';
  return null;
}

const presetLabel = (p: PresetName | null) => (p ? PRESET_INFO[p].label : 'custom');

export const compareSlice: LabSlice<CompareSlice> =
  ({ link }) =>
  (set, get) => {
    let nextId = 1;
    return {
      compareSource: 'latest',
      comparePreset: null,
      compareDraft: null,
      compareCheck: null,
      comparePending: null,
      comparison: null,
      compareError: null,
      compareOpened: null,

      setCompareSource(compareSource) {
        set({ compareSource });
      },

      pickCompareObjective(preset) {
        const a = currentRunConfig(get());
        if (!a) return;
        const draft = preset ? switchPreset(a.config, preset) : { ...a.config };
        set({ comparePreset: preset, compareDraft: draft, compareCheck: checkDraft(draft), compareError: null });
      },

      setCompareField(field, value) {
        const draft = { ...(get().compareDraft ?? {}), [field]: value };
        // A message about the earlier B no longer holds once B changes.
        set({ compareDraft: draft, compareCheck: checkDraft(draft), compareError: null });
      },

      fixCompareDependency() {
        const dependency = compareDependencyOf(get());
        if (!dependency) return;
        for (const [field, value] of Object.entries(dependency.fix)) get().setCompareField(field as RLField, value);
      },

      runComparison() {
        const s = get();
        const a = currentRunConfig(s);
        const b = s.compareCheck?.config;
        if (!a || !b || compareBlocker(s) !== null || !s.progress.runId) return;
        const id = nextId++;
        const edits = compareEdits(a.config, s.comparePreset, b);
        set({
          comparePending: {
            id,
            labelA: `A: ${presetLabel(a.preset)} (this run)`,
            labelB: `B: ${s.comparePreset ? presetLabel(s.comparePreset) : "this run's config"}${edits.length ? ` with ${edits.map((f) => `${f} ${String(b[f])}`).join(', ')}` : ''}`,
          },
          compareError: null,
        });
        link.request({ type: 'compare-objectives', source: s.compareSource, config: b }).then(
          (r) => get().receiveComparison(id, r),
          (e: unknown) => get().comparisonFailed(id, e instanceof Error ? e.message : String(e)),
        );
      },

      receiveComparison(id, r) {
        const p = get().comparePending;
        if (!p || id !== p.id) return;
        set({
          comparePending: null,
          compareError: null,
          comparison: {
            id: p.id,
            runId: r.runId,
            labelA: p.labelA,
            labelB: p.labelB,
            comparison: r.comparison,
            texts: r.texts,
            explanation: explainComparison(r.comparison),
          },
        });
      },

      openRunToCompare(runId) {
        const h = get().runs.find((r) => r.id === runId);
        if (!h) return;
        get().showRun(runId);
        set({ compareOpened: { runId, step: h.savedStep }, compareSource: 'fresh', compareError: null });
        link.request({ type: 'open-run', runId }).then(
          () => {
            // B starts as the run's own config, so Compare can run at once.
            if (get().compareDraft === null) get().pickCompareObjective(null);
          },
          (e: unknown) => {
            set({ compareOpened: null, compareError: e instanceof Error ? e.message : String(e) });
          },
        );
      },

      comparisonFailed(id, message) {
        if (get().comparePending?.id !== id) return;
        set({ comparePending: null, compareError: message });
      },
    };
  };
