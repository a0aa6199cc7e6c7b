// The seeds slice: seed groups from the page's side. The number of seeds the person picked and starting the edited
// config over them (the engine queues the runs, src/schema/seed-group.ts), how each group is drawn (its statistic
// across seeds with a bootstrap band, or every seed as a line) and which statistic (median or IQM), and opening a
// group on the charts, which loads its runs' records. The statistics themselves are src/store/seed-bands.ts.

import { SEED_GROUP_MAX, SEED_GROUP_MIN } from '../../schema/seed-group';
import type { SeedStatistic } from '../seed-bands';
import { groupMembers, type SeedGroupView } from '../seed-groups';
import { startBlocker } from '../selectors';
import type { LabSlice } from '../slice';

export interface SeedsState {
  /** Seeds of the next seed group (SEED_GROUP_MIN..SEED_GROUP_MAX). */
  seedCount: number;
  /** How each group is drawn, by group id (absent: 'band'). */
  seedGroupView: Record<string, SeedGroupView>;
  /** The per-step statistic a group's line shows. */
  seedStatistic: SeedStatistic;
}

export interface SeedsActions {
  setSeedCount(n: number): void;
  /** The edited config over `seedCount` seeds (its seed, seed + 1, ...), queued in the engine; false when it could not start. */
  startSeedGroup(): boolean;
  /** Draws a group as a band or seed by seed (seed by seed overlays all its runs); loads the runs whose records are missing. */
  setSeedGroupView(groupId: string, view: SeedGroupView): void;
  setSeedStatistic(statistic: SeedStatistic): void;
  /** Shows a seed group on the charts: its current (else first) run viewed, every run's records loaded. */
  openSeedGroup(groupId: string): void;
}

export type SeedsSlice = SeedsState & SeedsActions;

export const seedsSlice: LabSlice<SeedsSlice> =
  ({ link }) =>
  (set, get) => {
    /** Asks the worker for the records of the group's runs the page does not have (the live run's stream in). */
    const missing = (runId: string) => !get().views[runId] && runId !== get().progress.runId;
    const loadMembers = (groupId: string) => {
      for (const h of groupMembers(get().runs, groupId))
        if (missing(h.id)) link.send({ type: 'load-run', runId: h.id });
    };
    return {
      seedCount: 3,
      seedGroupView: {},
      seedStatistic: 'median',

      setSeedCount(n) {
        set({
          seedCount: Math.min(
            SEED_GROUP_MAX,
            Math.max(SEED_GROUP_MIN, Math.round(Number.isFinite(n) ? n : SEED_GROUP_MIN)),
          ),
        });
      },

      startSeedGroup() {
        const s = get();
        if (startBlocker(s) !== null) {
          s.startRun(); // says why (a notice for config errors), as Start does
          return false;
        }
        link.send({
          type: 'start-seeds',
          config: s.check.config!,
          preset: s.preset,
          backend: s.backend,
          seeds: s.seedCount,
        });
        return true;
      },

      setSeedGroupView(groupId, view) {
        set({ seedGroupView: { ...get().seedGroupView, [groupId]: view } });
        if (view === 'seeds') {
          const s = get();
          for (const h of groupMembers(s.runs, groupId))
            if (h.id !== s.viewRunId && !s.overlay.includes(h.id)) s.toggleOverlay(h.id);
        } else loadMembers(groupId);
      },

      setSeedStatistic(statistic) {
        set({ seedStatistic: statistic });
      },

      openSeedGroup(groupId) {
        const s = get();
        const members = groupMembers(s.runs, groupId);
        if (!members.length) return;
        const shown = members.find((h) => h.id === s.progress.runId) ?? members[0];
        s.showRun(shown.id);
        // Every run of the group whose records are missing is loaded, the shown one too; seed by seed, the others are
        // overlaid (which loads them).
        if ((s.seedGroupView[groupId] ?? 'band') === 'band') return loadMembers(groupId);
        if (missing(shown.id)) link.send({ type: 'load-run', runId: shown.id });
        get().setSeedGroupView(groupId, 'seeds');
      },
    };
  };
