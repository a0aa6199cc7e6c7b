// Seed groups: one config trained over N seeds (seed s, s+1, ...) queued on one device, each seed a named run whose
// header carries the group (RunHeader.seedGroup). The plain data and rules the engine, `npm run train -- --seeds`, its
// tests and the page share. A group's execution, for the page's queue and the CLI alike, is seed-group-run.ts (not
// imported by the page). Not the charts' statistics across seeds (src/store/seed-bands.ts).

/** The smallest and largest number of seeds a group may have: one seed is a run, more than 10 ties the device up for long. */
export const SEED_GROUP_MIN = 2;
export const SEED_GROUP_MAX = 10;

/** What a run's header says about its seed group. Absent on runs trained alone (and on every run stored before groups). */
export interface SeedGroupTag {
  /** Shared by every run of the group. */
  id: string;
  /** This run's place in the group (0-based; its seed is the group's first seed + index). */
  index: number;
  /** Seeds in the group. */
  size: number;
}

/** Where the engine's seed queue stands, on the progress of its current run. */
export interface SeedQueueProgress {
  groupId: string;
  /** The current run's place in the group (0-based) and the group's size. */
  index: number;
  size: number;
  /** The seeds whose runs failed or were interrupted so far (the queue went on without them). */
  failedSeeds: number[];
}

/** Why a number of seeds is refused (null: it is accepted). */
export function seedCountError(n: number): string | null {
  if (!Number.isInteger(n) || n < SEED_GROUP_MIN || n > SEED_GROUP_MAX)
    return `a seed group has ${SEED_GROUP_MIN} to ${SEED_GROUP_MAX} seeds (got ${n})`;
  return null;
}

/** The seeds of a group starting at `first`: first, first + 1, ... */
export function groupSeeds(first: number, size: number): number[] {
  return Array.from({ length: size }, (_, i) => first + i);
}

/** A seed group id that sorts by creation time. */
export function newSeedGroupId(now: number): string {
  return `seeds-${now.toString(36)}-${Math.floor(Math.random() * 36 ** 4)
    .toString(36)
    .padStart(4, '0')}`;
}

/** What a person reads when a seed group ends with seeds not trained (null when every seed trained). */
export function seedGroupEndText(size: number, failed: readonly { seed: number; why: string }[]): string | null {
  if (!failed.length) return null;
  return `The seed group finished with ${size - failed.length} of ${size} seeds trained; not trained: ${failed.map((f) => `seed ${f.seed} (${f.why})`).join('; ')}.`;
}
