// A seed group's execution: one config over N seeds (seed s, s+1, ...), run after run on one device, each seed's
// run tagged with the group, a seed that fails (or cannot start) recorded with why while the others go on, and the
// end said in words. Both drivers execute groups through it: the page's engine (lab-engine.ts) holds a SeedGroupRun
// as its seed queue and moves it on as each run ends (its runs pause and continue across the person's clicks), and
// `npm run train -- --seeds` runs one with runSeedGroup, seed after seed to the end or a signal. The plain data and
// texts the page also imports are in seed-group.ts (kept free of the engine).

import type { RLConfig } from '../schema/config';
import { groupSeeds, seedGroupEndText, type SeedGroupTag, type SeedQueueProgress } from '../schema/seed-group';

/** A seed whose run failed, was interrupted, or could not start, and why. */
export interface FailedSeed {
  seed: number;
  why: string;
}

export class SeedGroupRun {
  /** The group's seeds, in order: the config's seed, seed + 1, ... */
  readonly seeds: number[];
  /** The place of the seed whose run is current (seeds.length once the group has ended). */
  index = 0;
  readonly failed: FailedSeed[] = [];

  /** `config` validated; its seed is the group's first. */
  constructor(
    readonly id: string,
    readonly config: RLConfig,
    size: number,
  ) {
    this.seeds = groupSeeds(config.seed, size);
  }

  /** Every seed has had its turn. */
  get ended(): boolean {
    return this.index >= this.seeds.length;
  }

  /** The current seed. */
  get seed(): number {
    return this.seeds[this.index];
  }

  /** The current seed's run config: the group's config at that seed. */
  seedConfig(): RLConfig {
    return { ...this.config, seed: this.seed };
  }

  /** What the current seed's run header says about the group. */
  tag(): SeedGroupTag {
    return { id: this.id, index: this.index, size: this.seeds.length };
  }

  /** Seeds after the current one. */
  get left(): number {
    return this.seeds.length - this.index - 1;
  }

  /** The seeds not started yet (after the current one). */
  notStarted(): number[] {
    return this.seeds.slice(this.index + 1);
  }

  /** Records the current seed as not trained (why), and moves on to the next. */
  failCurrent(why: string): void {
    this.failed.push({ seed: this.seed, why });
    this.index++;
  }

  /** The current seed's run trained to its end: moves on to the next. */
  finishCurrent(): void {
    this.index++;
  }

  /** Records every seed from the current one on as not trained (the group was stopped), and ends the group. */
  stopHere(why: string): void {
    this.failed.push(...this.seeds.slice(this.index).map((seed) => ({ seed, why })));
    this.index = this.seeds.length;
  }

  /** What a person reads when the group ended with seeds not trained (null when every seed trained). */
  endText(): string | null {
    return seedGroupEndText(this.seeds.length, this.failed);
  }

  /** Where the group stands, for the progress of its current run. */
  progress(): SeedQueueProgress {
    return {
      groupId: this.id,
      index: this.index,
      size: this.seeds.length,
      failedSeeds: this.failed.map((f) => f.seed),
    };
  }
}

/** How one seed's run ended: trained to its end (with the driver's result), or stopped early (why) and not trained. */
export type SeedRunEnd<T> = { kind: 'trained'; result: T } | { kind: 'stopped'; why: string };

/**
 * Executes a seed group to its end, seed after seed: `run` trains one seed's run (a throw is that seed's failure,
 * reported through onFailed, and the others go on); `stopped` says, before each seed, why no further seed starts
 * (a signal), or null. Returns the trained seeds' results in order.
 */
export async function runSeedGroup<T>(
  group: SeedGroupRun,
  run: (config: RLConfig, tag: SeedGroupTag) => Promise<SeedRunEnd<T>>,
  hooks: { stopped(): string | null; onStart?(seed: number): void; onFailed?(seed: number, why: string): void },
): Promise<{ seed: number; result: T }[]> {
  const trained: { seed: number; result: T }[] = [];
  while (!group.ended) {
    const stop = hooks.stopped();
    if (stop !== null) {
      group.stopHere(stop);
      break;
    }
    const seed = group.seed;
    hooks.onStart?.(seed);
    let end: SeedRunEnd<T>;
    try {
      end = await run(group.seedConfig(), group.tag());
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      hooks.onFailed?.(seed, why);
      group.failCurrent(why);
      continue;
    }
    if (end.kind === 'trained') {
      trained.push({ seed, result: end.result });
      group.finishCurrent();
    } else group.failCurrent(end.why);
  }
  return trained;
}

/** What the page's seed queue asks of its engine. */
export interface SeedQueuePorts {
  /** Creates (and makes current) the run of one seed; a throw is that seed's failure to start. */
  open(config: RLConfig, tag: SeedGroupTag): Promise<void>;
  notice(level: 'warning' | 'error', text: string): void;
  /** The queue ended (every seed had its turn): the engine lets go of it, then reports its progress. */
  ended(): void;
  progress(): void;
}

/**
 * The page's seed queue: a SeedGroupRun moved on as each of its runs ends, across the person's pauses (the engine
 * trains each run; pause holds the queue at its seed). Each seed that is not trained, and the seeds a dropped queue
 * leaves, are said in notices.
 */
export class SeedQueue {
  private dropped = false;

  constructor(
    readonly group: SeedGroupRun,
    private readonly ports: SeedQueuePorts,
  ) {}

  /** Creates the run of the current seed, or of the next that can start; false when none is left or the queue was dropped. */
  async openNext(): Promise<boolean> {
    const g = this.group;
    while (!g.ended) {
      if (this.dropped) return false;
      try {
        await this.ports.open(g.seedConfig(), g.tag());
        return !this.dropped;
      } catch (e) {
        if (this.dropped) return false;
        this.fail(`could not start: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    this.ports.ended();
    const text = g.endText();
    if (text) this.ports.notice('warning', text);
    this.ports.progress();
    return false;
  }

  /**
   * The current seed's run stopped with `status` (and the message its header keeps): done or failed moves the queue
   * on (true); any other status (paused) holds it (false).
   */
  runStopped(status: string, why: string | undefined): boolean {
    if (status === 'failed' || status === 'interrupted')
      this.fail(`${status === 'failed' ? 'failed' : 'was interrupted'}${why ? `: ${why.replace(/\.\s*$/, '')}` : ''}`);
    else if (status === 'done') this.group.finishCurrent();
    else return false;
    return true;
  }

  /** Stops the queue (a reset, a new run, a resume): the seeds not started yet are named. */
  drop(): void {
    this.dropped = true;
    const left = this.group.notStarted();
    if (left.length)
      this.ports.notice(
        'warning',
        `The seed group stopped: seed${left.length > 1 ? 's' : ''} ${left.join(', ')} ${left.length > 1 ? 'were' : 'was'} not run.`,
      );
  }

  /** The current seed is not trained (why, said in a notice); the group moves on to the next. */
  private fail(why: string): void {
    const g = this.group;
    const { seed, left } = g;
    g.failCurrent(why);
    this.ports.notice(
      'error',
      `Seed ${seed} of the seed group ${why}.${left > 0 ? ` The other seed${left > 1 ? 's go' : ' goes'} on.` : ''}`,
    );
  }
}
