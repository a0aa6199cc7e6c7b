// Run labels that tell runs apart by what differs between them, not only by colour: the preset, then the knobs
// whose values differ among the runs compared ("grpo · lr 0.001 · temp 0.7"), or, for a run alone, its task and
// the knobs where its algorithm departs from its preset; a run imported from TRL, verl or OpenRLHF, its trainer and
// file. Pure; the saved name of a run is not changed (it stays in files and exports).

import { TRAINER_TITLES } from '../engine/types';
import type { RunHeader } from '../engine/types';
import { FIELD_SECTIONS } from '../rl/config';
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

/** One knob and this run's value, as a label shows it. */
function knobPart(field: string, value: unknown): string {
  return `${SHORT_KNOB[field] ?? field} ${showValue(value)}`;
}

/** The preset, `context` (the task, for a run alone), then the first MAX_KNOBS of `fields` with this run's values. */
function label(h: RunHeader, fields: readonly string[], context: readonly string[] = []): string {
  const parts = [
    h.preset ?? 'custom',
    ...context,
    ...fields.slice(0, MAX_KNOBS).map((f) => knobPart(f, (h.config as unknown as Record<string, unknown>)[f])),
  ];
  if (fields.length > MAX_KNOBS) parts.push(`+${fields.length - MAX_KNOBS} more`);
  return parts.join(' · ');
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
    const changed = [...differsFromPreset(h.config as unknown as Record<string, unknown>, h.preset)].filter(
      (f) => !SETUP.has(f),
    );
    const task = `${h.config.task}${h.config.difficulty !== null ? ` ${h.config.difficulty}` : ''}`;
    out.set(h.id, label(h, changed, [task]));
    return out;
  }
  const fields = configDiff(runs.map((h) => ({ config: h.config, preset: h.preset })))
    .map((r) => r.field)
    .filter((f) => f !== 'preset');
  const seen = new Map<string, number>();
  for (const h of [...runs].sort((a, b) => a.createdAt - b.createdAt)) {
    const text = label(h, fields);
    const n = (seen.get(text) ?? 0) + 1;
    seen.set(text, n);
    out.set(h.id, n > 1 ? `${text} #${n}` : text);
  }
  return out;
}
