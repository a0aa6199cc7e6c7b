// Config comparisons the page shows: the fields where two or more runs' configs differ (the overlay's diff
// table), the fields where a config departs from its preset (the configure panel's marks), and the per-field
// messages of a config being edited. Pure functions over RL configs.

import { sameValue } from '../schema/fields';
import {
  FIELD_SECTIONS,
  PRESETS,
  RL_FIELDS,
  checkConfig,
  resolveConfig,
  type PresetName,
  type RLConfig,
  type RLField,
} from '../schema/config';

const FIELD_NAMES = Object.values(FIELD_SECTIONS).flat();

export { sameConfig } from '../schema/config';

/** A config value as text for tables and tooltips. */
export function showValue(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'object')
    return Object.entries(v)
      .map(([k, w]) => `${k}:${w}`)
      .join(', ');
  return String(v);
}

/** One row of a diff: a field and its value in each config (in the order given). */
export interface DiffRow {
  field: string;
  values: unknown[];
}

/**
 * The fields whose values are not all equal across these configs (plus the preset, as a pseudo-field, when
 * presets differ), in panel order.
 */
export function configDiff(items: readonly { config: RLConfig; preset: PresetName | null }[]): DiffRow[] {
  if (items.length < 2) return [];
  const rows: DiffRow[] = [];
  if (items.some((it) => it.preset !== items[0].preset))
    rows.push({ field: 'preset', values: items.map((it) => it.preset) });
  for (const f of FIELD_NAMES) {
    const values = items.map((it) => it.config[f]);
    if (values.some((v) => !sameValue(v, values[0]))) rows.push({ field: f, values });
  }
  return rows;
}

/** Fields of `draft` that differ from `preset`'s config (the base a preset gives every field). */
export function differsFromPreset(draft: Readonly<Record<string, unknown>>, preset: PresetName | null): Set<RLField> {
  const base = resolveConfig(preset);
  return new Set(FIELD_NAMES.filter((f) => !sameValue(draft[f], base[f])));
}

/** The outcome of checking a config being edited: messages by field, the rest, and the valid config if any. */
export interface DraftCheck {
  fieldErrors: Partial<Record<RLField, string>>;
  /** Errors not about one field. */
  otherErrors: string[];
  fieldWarnings: Partial<Record<RLField, string>>;
  otherWarnings: string[];
  /** The config when there is no error. */
  config: RLConfig | null;
}

/** Splits each message by the field it starts with ("epsilon_high: must be ..."). */
function byField(messages: readonly string[]): { fields: Partial<Record<RLField, string>>; other: string[] } {
  const fields: Partial<Record<RLField, string>> = {};
  const other: string[] = [];
  for (const m of messages) {
    const key = /^([a-z_]+):/.exec(m)?.[1];
    if (key && Object.hasOwn(RL_FIELDS, key)) {
      const f = key as RLField;
      fields[f] = fields[f] ? `${fields[f]}; ${m.slice(key.length + 2)}` : m.slice(key.length + 2);
    } else other.push(m);
  }
  return { fields, other };
}

/** Checks a config being edited (any field may hold a raw, unparsed value). */
export function checkDraft(draft: Readonly<Record<string, unknown>>): DraftCheck {
  const { errors, warnings } = checkConfig(draft);
  const e = byField(errors);
  const w = byField(warnings);
  return {
    fieldErrors: e.fields,
    otherErrors: e.other,
    fieldWarnings: w.fields,
    otherWarnings: w.other,
    config: errors.length ? null : ({ ...draft } as RLConfig),
  };
}

/** Fields a preset switch keeps from the current config (the experiment, not the algorithm) unless the preset sets them. */
export const KEPT_ON_PRESET_SWITCH: readonly RLField[] = [
  ...FIELD_SECTIONS.task,
  ...FIELD_SECTIONS.schedule,
  'seed',
  'num_generations',
  'train_batch_size',
  'max_completion_length',
  'temperature',
  'top_k',
  'top_p',
  'min_p',
  'learning_rate',
];

/** The config after switching to `preset`: the preset's knobs, keeping the experiment's fields the preset does not set. */
export function switchPreset(
  current: Readonly<Record<string, unknown>>,
  preset: PresetName | null,
): Record<string, unknown> {
  const base: Record<string, unknown> = { ...resolveConfig(preset) };
  const setByPreset = new Set(Object.keys(preset ? PRESETS[preset] : {}));
  for (const f of KEPT_ON_PRESET_SWITCH) if (!setByPreset.has(f) && f in current) base[f] = current[f];
  return base;
}
