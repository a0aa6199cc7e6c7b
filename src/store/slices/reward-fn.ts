// The reward_fn editor's slice: the last compile check of the function as typed (in the reward sandbox, through the
// worker; the page never parses or runs it) and the last "test on one batch" (each completion's reward). Answers for
// a text that is no longer the one typed are dropped. Not the config draft itself (slices/config.ts).

import type { RewardFnProblem, RewardFnTrialRow } from '../../rl/rewards/reward-fn-trial';
import type { LabSlice } from '../slice';

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The check of one text: pending while the sandbox compiles it; then its problem, or null when it compiles. */
export interface RewardFnCheck {
  source: string;
  pending: boolean;
  problem: RewardFnProblem | null;
}

/** The trial of one text on one batch of the task: the rows, or the problem. */
export interface RewardFnTrial {
  source: string;
  pending: boolean;
  rows: RewardFnTrialRow[] | null;
  problem: RewardFnProblem | null;
}

export interface RewardFnState {
  rewardFnCheck: RewardFnCheck | null;
  rewardFnTrial: RewardFnTrial | null;
}

export interface RewardFnActions {
  /** Compiles `source` in the sandbox (the editor calls it once typing pauses); empty text clears the check. */
  checkRewardFn(source: string): void;
  /** Scores one batch of the edited config's task with its reward_fn, in the sandbox. */
  tryRewardFn(): void;
}

export type RewardFnSlice = RewardFnState & RewardFnActions;

/** A problem of the function itself (it does not compile, is not a function), not of asking about it. */
export function isFunctionProblem(p: RewardFnProblem): boolean {
  return p.message.startsWith('reward_fn') && !p.message.startsWith('reward_fn could not be tried');
}

/** The problem of a check or trial that could not be asked (no worker, a failed request). */
const failed = (e: unknown): RewardFnProblem => ({ message: messageOf(e), at: null });

export const rewardFnSlice: LabSlice<RewardFnSlice> =
  ({ link }) =>
  (set, get) => ({
    rewardFnCheck: null,
    rewardFnTrial: null,

    checkRewardFn(source) {
      if (!source.trim()) return set({ rewardFnCheck: null });
      const last = get().rewardFnCheck;
      // A text already checked is not sent again, unless the check itself could not be made (a failed request).
      if (last?.source === source && (last.pending || !last.problem || isFunctionProblem(last.problem))) return;
      set({ rewardFnCheck: { source, pending: true, problem: null } });
      const done = (problem: RewardFnProblem | null) => {
        if (get().rewardFnCheck?.source === source) set({ rewardFnCheck: { source, pending: false, problem } });
      };
      link.request({ type: 'check-reward-fn', source }).then(
        (r) => done(r.problem),
        (e: unknown) => done(failed(e)),
      );
    },

    tryRewardFn() {
      const s = get();
      const source = typeof s.draft.reward_fn === 'string' ? s.draft.reward_fn : '';
      const config = s.check.config;
      if (!source.trim())
        return set({
          rewardFnTrial: { source, pending: false, rows: null, problem: { message: 'reward_fn is empty', at: null } },
        });
      if (!config) {
        const problem = { message: 'the config has errors (marked); fix them to test reward_fn on its task', at: null };
        return set({ rewardFnTrial: { source, pending: false, rows: null, problem } });
      }
      set({ rewardFnTrial: { source, pending: true, rows: null, problem: null } });
      const done = (rows: RewardFnTrialRow[] | null, problem: RewardFnProblem | null) => {
        if (get().rewardFnTrial?.source === source) set({ rewardFnTrial: { source, pending: false, rows, problem } });
        // A trial that found a compile error is the check of that text too.
        if (problem?.message.startsWith('reward_fn does not compile'))
          set({ rewardFnCheck: { source, pending: false, problem } });
      };
      link.request({ type: 'try-reward-fn', config }).then(
        (r) => done(r.rows, r.problem),
        (e: unknown) => done(null, failed(e)),
      );
    },
  });
