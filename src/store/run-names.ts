// Run names, one per saved run, the same on the charts' legend, the runs list, the config diff and the status line:
// by what each run is (a given name, else its preset, the algorithm's knobs it changed from that preset, and its
// seed), made distinct against the earlier saved runs only, so a run keeps its name whichever runs are on the
// charts, whatever the editor holds, and when later runs are added. A run imported from TRL, verl or OpenRLHF: its
// trainer and file. Pure.

import { TRAINER_TITLES, defaultRunName } from '../schema/run-types';
import type { RunHeader } from '../schema/run-types';
import { FIELD_SECTIONS } from '../schema/config';
import { sameValue } from '../schema/fields';
import { configDiff, differsFromPreset, KEPT_ON_PRESET_SWITCH, showValue } from './config-diff';

/** Short names for the knobs that differ most often between runs; the others are written as the knob itself. */
const SHORT_KNOB: Readonly<Record<string, string>> = {
  learning_rate: 'lr',
  temperature: 'temp',
  num_generations: 'G',
  train_batch_size: 'B',
  max_completion_length: 'L_max',
};

/** How many knobs a name lists before it says "+n more" (the full diff is the overlay's table). */
const MAX_KNOBS = 3;

/**
 * Knobs that set up the experiment rather than the algorithm (the task, the model, the schedule): a run alone is
 * named by its task and by how its algorithm departs from the preset, not by its step count or checkpoint.
 */
const SETUP = new Set<string>([...FIELD_SECTIONS.task, ...FIELD_SECTIONS.schedule]);

/** The longest value a label writes out (a reward function or a prompt list is cut, with "…"). */
const MAX_VALUE = 16;

/** One knob and this run's value, as a label shows it. */
function knobPart(field: string, value: unknown): string {
  const text = showValue(value).replace(/\s+/g, ' ');
  return `${SHORT_KNOB[field] ?? field} ${text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text}`;
}

const knobValue = (h: RunHeader, field: string) => (h.config as unknown as Record<string, unknown>)[field];

/** The name a person or a lesson gave the run, or null when it has the engine's default name. */
export function givenName(h: RunHeader): string | null {
  return h.name && h.name !== defaultRunName(h.config, h.preset) ? h.name : null;
}

/**
 * The given name (else the preset), `context` (the task, for a run alone), then `fields` with this run's values:
 * at most `max` of them and a count of the rest, and `tail` (the seed) always.
 */
function label(
  h: RunHeader,
  fields: readonly string[],
  context: readonly string[] = [],
  max = MAX_KNOBS,
  tail: readonly string[] = [],
): string {
  const parts = [
    givenName(h) ?? h.preset ?? 'custom',
    ...context,
    ...fields.slice(0, max).map((f) => knobPart(f, knobValue(h, f))),
  ];
  if (fields.length > max) parts.push(`+${fields.length - max} more`);
  parts.push(...tail.map((f) => knobPart(f, knobValue(h, f))));
  return parts.join(' · ');
}

/** Fields in label order: the algorithm's knobs first, then the setup (task, model, schedule). */
function labelOrder(fields: readonly string[]): string[] {
  return [...fields.filter((f) => !SETUP.has(f)), ...fields.filter((f) => SETUP.has(f))];
}

/** Names the runs imported from another trainer's log (by its trainer and file, numbered by creation) into `out`. */
function nameForeignRuns(all: readonly RunHeader[], out: Map<string, string>): void {
  const foreign = all.filter((h) => h.origin);
  for (const h of foreign) {
    const text = `${TRAINER_TITLES[h.origin!.trainer]} · ${h.origin!.file}`;
    const n =
      foreign.filter(
        (o) => o.createdAt < h.createdAt && `${TRAINER_TITLES[o.origin!.trainer]} · ${o.origin!.file}` === text,
      ).length + 1;
    out.set(h.id, n > 1 ? `${text} #${n}` : text);
  }
}

/** The experiment's fields (task, model, schedule, batch and sampling, learning rate, seed): a run's own name leaves them out. */
const EXPERIMENT = new Set<string>(KEPT_ON_PRESET_SWITCH);

/** What a run is: its given name, else its preset, the algorithm's knobs it changed from the preset, and its seed. */
export function ownRunName(h: RunHeader): string {
  if (givenName(h)) return givenName(h)!;
  const changed = [...differsFromPreset(h.config as unknown as Record<string, unknown>, h.preset)].filter(
    (f) => !EXPERIMENT.has(f),
  );
  return label(h, labelOrder(changed), [], MAX_KNOBS, ['seed']);
}

/**
 * The name of each saved run (by id): its own name (ownRunName); a run whose own name an earlier run holds adds the
 * knobs in which it differs from those runs (the seed first for a given name), and "#n" when none tells them apart.
 * A run's name depends only on itself and the runs saved before it, so it never changes when runs are added, charted
 * or edited. Runs imported from another trainer are named by trainer and file.
 */
export function savedRunNamesOf(all: readonly RunHeader[]): Map<string, string> {
  const out = new Map<string, string>();
  nameForeignRuns(all, out);
  const taken = new Set<string>();
  /** Earlier runs by their own name. */
  const holders = new Map<string, RunHeader[]>();
  for (const h of all.filter((r) => !r.origin).sort((a, b) => a.createdAt - b.createdAt)) {
    const own = ownRunName(h);
    const before = holders.get(own) ?? [];
    let name = own;
    if (before.length) {
      const differ = configDiff([...before, h].map((r) => ({ config: r.config, preset: r.preset })))
        .map((r) => r.field)
        .filter((f) => f !== 'preset' && before.every((o) => !sameValue(knobValue(o, f), knobValue(h, f))));
      const fields =
        givenName(h) && differ.includes('seed') ? ['seed', ...differ.filter((f) => f !== 'seed')] : labelOrder(differ);
      const parts = fields
        .filter((f) => !own.includes(knobPart(f, knobValue(h, f))))
        .slice(0, MAX_KNOBS)
        .map((f) => knobPart(f, knobValue(h, f)));
      if (parts.length) name = `${own} · ${parts.join(' · ')}`;
    }
    for (let n = 2; taken.has(name); n++) name = `${own} #${n}`;
    taken.add(name);
    holders.set(own, [...before, h]);
    out.set(h.id, name);
  }
  return out;
}

/** savedRunNamesOf, computed once per runs list (the store's list is a new array whenever it changes). */
const namesByList = new WeakMap<readonly RunHeader[], Map<string, string>>();

export function savedRunNames(runs: readonly RunHeader[]): Map<string, string> {
  let names = namesByList.get(runs);
  if (!names) {
    names = savedRunNamesOf(runs);
    namesByList.set(runs, names);
  }
  return names;
}
