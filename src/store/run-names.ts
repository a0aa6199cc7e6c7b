// Run labels that tell runs apart by what differs between them, not only by colour: a run's own name when it was
// given one (by the person, or the lesson run's label), else its preset; then the knobs in which it stands apart from
// the other runs shown (a value most of them do not share: "grpo · lr 0.001 · temp 0.7"), algorithm knobs before the
// setup (task, model, schedule), and the seed whenever the runs' seeds differ. A run alone: its task and the knobs
// where its algorithm departs from its preset. A run imported from TRL, verl or OpenRLHF: its trainer and file. Labels
// that would still be equal lead with the knobs that differ among them, then are numbered by creation ("#2"). Pure.

import { TRAINER_TITLES, defaultRunName } from '../schema/run-types';
import type { RunHeader } from '../schema/run-types';
import { FIELD_SECTIONS } from '../schema/config';
import { sameValue } from '../schema/fields';
import { configDiff, differsFromPreset, showValue } from './config-diff';

/** Short names for the knobs that differ most often between runs; the others are written as the knob itself. */
const SHORT_KNOB: Readonly<Record<string, string>> = {
  learning_rate: 'lr',
  temperature: 'temp',
  num_generations: 'G',
  train_batch_size: 'B',
  max_completion_length: 'L_max',
};

/** How many differing knobs a label names before it says "+n more" (the full diff is the overlay's table). */
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

/** The fields in which `h` stands apart: its value is held by no more than half of `runs`. */
function standsApartIn(h: RunHeader, runs: readonly RunHeader[], fields: readonly string[]): string[] {
  return fields.filter((f) => {
    const mine = knobValue(h, f);
    const sharing = runs.filter((o) => sameValue(knobValue(o, f), mine)).length;
    return sharing * 2 <= runs.length;
  });
}

/**
 * A label for each run (by id), distinct whenever the configs are: with two or more runs, the preset and the
 * knobs whose values differ among them; a run alone, the preset, its task and the algorithm's knobs it changed
 * from its preset (not the setup: task, model, schedule). Runs with equal configs are numbered by creation ("#2").
 */
export function runLabels(all: readonly RunHeader[]): Map<string, string> {
  const out = new Map<string, string>();
  // A run from another trainer's log has no lab config to tell it by: its trainer and file name it, and the
  // lab's runs are labelled among themselves.
  const foreign = all.filter((h) => h.origin);
  for (const h of foreign) {
    const text = `${TRAINER_TITLES[h.origin!.trainer]} · ${h.origin!.file}`;
    const n =
      foreign.filter(
        (o) => o.createdAt < h.createdAt && `${TRAINER_TITLES[o.origin!.trainer]} · ${o.origin!.file}` === text,
      ).length + 1;
    out.set(h.id, n > 1 ? `${text} #${n}` : text);
  }
  const runs = all.filter((h) => !h.origin);
  if (runs.length === 1) {
    const h = runs[0];
    const given = givenName(h);
    if (given) {
      out.set(h.id, given);
      return out;
    }
    const changed = [...differsFromPreset(h.config as unknown as Record<string, unknown>, h.preset)].filter(
      (f) => !SETUP.has(f),
    );
    const task = `${h.config.task}${h.config.difficulty !== null ? ` ${h.config.difficulty}` : ''}`;
    out.set(h.id, label(h, changed, [task]));
    return out;
  }
  const diff = configDiff(runs.map((h) => ({ config: h.config, preset: h.preset })))
    .map((r) => r.field)
    .filter((f) => f !== 'preset');
  // The seed closes every label whenever the seeds differ; the other knobs are named where a run stands apart.
  const tail = diff.includes('seed') ? ['seed'] : [];
  const knobs = labelOrder(diff.filter((f) => f !== 'seed'));
  const own = new Map<string, string[]>();
  const first = new Map<string, string>();
  for (const h of runs) {
    own.set(h.id, givenName(h) ? [] : standsApartIn(h, runs, knobs));
    first.set(h.id, label(h, own.get(h.id)!, [], MAX_KNOBS, tail));
  }
  // Runs whose labels are equal lead with the knobs that differ among them (runs with equal configs have none).
  const alike = new Map<string, RunHeader[]>();
  for (const h of runs) alike.set(first.get(h.id)!, [...(alike.get(first.get(h.id)!) ?? []), h]);
  const seen = new Map<string, number>();
  for (const h of [...runs].sort((a, b) => a.createdAt - b.createdAt)) {
    let text = first.get(h.id)!;
    const group = alike.get(text)!;
    if (group.length > 1) {
      const within = knobs.filter((f) => group.some((o) => !sameValue(knobValue(o, f), knobValue(group[0], f))));
      if (within.length)
        text = label(h, [...within, ...own.get(h.id)!.filter((f) => !within.includes(f))], [], MAX_KNOBS, tail);
    }
    const n = (seen.get(text) ?? 0) + 1;
    seen.set(text, n);
    out.set(h.id, n > 1 ? `${text} #${n}` : text);
  }
  return out;
}
