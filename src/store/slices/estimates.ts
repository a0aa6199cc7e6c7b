// The step estimates the page shows before Start: for the edited config ("about N s per step on this adapter") and
// for each model of the real-model experiment (parameters, memory, s/step), asked of the worker, which sizes each
// model from its config.json alone (src/engine/model-estimates.ts). An answer for configs no longer asked is dropped.
// Not the experiment's choices (src/schema/config/real-model-experiment.ts) and not the run's measured pace.

import type { ModelEstimate, ModelEstimateProblem } from '../../engine/model-estimates';
import type { RLConfig } from '../../schema/config';
import type { LabSlice } from '../slice';

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** What is asked: the edited config, or the experiment's configs (one per model it offers). */
export type EstimateTopic = 'draft' | 'experiment';

/** The last answer for a topic, or the question in flight. */
export interface EstimateView {
  /** The configs asked, as JSON: an answer for other configs is not shown. */
  key: string;
  pending: boolean;
  estimates: (ModelEstimate | ModelEstimateProblem)[];
  /** Where the adapter's speed figures come from, in words. */
  throughput: string | null;
  /** Why the worker could not answer. */
  error: string | null;
}

export interface EstimatesState {
  estimates: Partial<Record<EstimateTopic, EstimateView>>;
}

export interface EstimatesActions {
  /** Asks the worker for the estimates of `configs` under `topic` (again only when the configs changed). */
  requestEstimates(topic: EstimateTopic, configs: RLConfig[]): void;
}

export type EstimatesSlice = EstimatesState & EstimatesActions;

/** True for an estimate, false for a model that could not be sized. */
export function isEstimate(e: ModelEstimate | ModelEstimateProblem): e is ModelEstimate {
  return 'seconds' in e;
}

export const estimatesSlice: LabSlice<EstimatesSlice> =
  ({ link }) =>
  (set, get) => ({
    estimates: {},

    requestEstimates(topic, configs) {
      const key = JSON.stringify(configs);
      const last = get().estimates[topic];
      if (last?.key === key && !last.error) return;
      const put = (view: Omit<EstimateView, 'key'>) => {
        if (get().estimates[topic]?.key === key) set({ estimates: { ...get().estimates, [topic]: { key, ...view } } });
      };
      set({
        estimates: {
          ...get().estimates,
          [topic]: {
            key,
            pending: true,
            estimates: last?.estimates ?? [],
            throughput: last?.throughput ?? null,
            error: null,
          },
        },
      });
      link.request({ type: 'estimate', configs }).then(
        (r) => put({ pending: false, estimates: r.estimates, throughput: r.throughput, error: null }),
        (e: unknown) => put({ pending: false, estimates: [], throughput: null, error: messageOf(e) }),
      );
    },
  });
