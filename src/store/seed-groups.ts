// Seed groups on the page: which saved runs form a group (the group id in their headers), how the runs list shows
// them (one row per group, at its newest run's place), which runs the charts draw as one group and which as lines of
// their own, and a group's label. Pure functions of run headers; the statistics across seeds are seed-bands.ts.

import type { RunHeader } from '../schema/run-types';

/** How a seed group is drawn: its statistic across seeds with a band, or every seed as a line of its own. */
export type SeedGroupView = 'band' | 'seeds';

/** The runs of a seed group, in seed order. */
export function groupMembers(runs: readonly RunHeader[], groupId: string): RunHeader[] {
  return runs.filter((h) => h.seedGroup?.id === groupId).sort((a, b) => a.seedGroup!.index - b.seedGroup!.index);
}

/** A row of the runs list: a run alone, or a seed group with its runs (in seed order). */
export type RunsListRow = { kind: 'run'; run: RunHeader } | { kind: 'group'; groupId: string; members: RunHeader[] };

/** The runs list with each seed group gathered into one row where its first-listed run is (runs keep their order). */
export function runsListRows(runs: readonly RunHeader[]): RunsListRow[] {
  const rows: RunsListRow[] = [];
  const seen = new Set<string>();
  for (const h of runs) {
    const g = h.seedGroup?.id;
    if (g === undefined) rows.push({ kind: 'run', run: h });
    else if (!seen.has(g)) {
      seen.add(g);
      rows.push({ kind: 'group', groupId: g, members: groupMembers(runs, g) });
    }
  }
  return rows;
}

/** What the charts draw: a run alone, or a seed group (`members`: its runs whose records are on the page). */
export interface ChartEntry {
  /** The run drawn, or the group's run that was asked for (viewed or overlaid first). */
  id: string;
  members?: string[];
  groupId?: string;
}

/**
 * The charts' runs (viewed first, then overlaid) with every seed group drawn as a band gathered into one entry at
 * its first run's place, holding all its runs that have records on the page (`loaded`); a group drawn seed by seed
 * leaves its runs as they are.
 */
export function chartEntries(
  ids: readonly string[],
  runs: readonly RunHeader[],
  views: Readonly<Record<string, SeedGroupView>>,
  loaded: (runId: string) => boolean,
): ChartEntry[] {
  const out: ChartEntry[] = [];
  const drawn = new Set<string>();
  for (const id of ids) {
    const g = runs.find((r) => r.id === id)?.seedGroup?.id;
    if (g === undefined || (views[g] ?? 'band') !== 'band') {
      out.push({ id });
      continue;
    }
    if (drawn.has(g)) continue;
    drawn.add(g);
    const members = groupMembers(runs, g)
      .map((h) => h.id)
      .filter((m) => m === id || loaded(m));
    out.push({ id, members, groupId: g });
  }
  return out;
}

/** A run's name without its " · seed N" ending (the engine's default names end so). */
function withoutSeed(name: string): string {
  return name.replace(/ · seed \d+$/, '');
}

/** A seed group's label: its runs' common name and their seeds ("GRPO · copy 3 · seeds 0-2"). */
export function seedGroupLabel(members: readonly RunHeader[]): string {
  if (!members.length) return 'seed group';
  const seeds = members.map((h) => h.config.seed).sort((a, b) => a - b);
  const consecutive = seeds.every((s, i) => i === 0 || s === seeds[i - 1] + 1);
  const list = consecutive && seeds.length > 2 ? `${seeds[0]}-${seeds[seeds.length - 1]}` : seeds.join(', ');
  return `${withoutSeed(members[0].name)} · seeds ${list}`;
}
