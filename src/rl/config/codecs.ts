// The RL config's text forms at the boundaries: a JSON file (an object of fields, optionally with "preset"), and
// URL parameters for a shareable link (the preset and only the fields that differ from it). Both decode through
// the schema's field rules and validate once; bad JSON is reported with line, column and what was expected.

import { decodeFieldText, describe, encodeFieldText, sameValue, suggestion, unknownFieldMessage } from '../../schema/fields';
import { jsonErrorMessage } from './messages';
import { PRESET_NAMES, isPresetName, type PresetName } from './presets';
import { FIELD_NAMES, FIELD_SPECS, RL_FIELDS, type RLConfig, type RLField } from './schema';
import { RLConfigError, resolveConfig } from './validate';

/**
 * A config from JSON text: an object of fields, optionally with "preset" naming the preset the other fields
 * override (absent: the defaults). Bad JSON is reported with line, column and what was expected.
 */
export function parseConfigJson(text: string): RLConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RLConfigError([jsonErrorMessage(text, err)]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RLConfigError([`config JSON: the top level must be an object of fields, got ${describe(value)}`]);
  }
  const { preset, ...fields } = value as Record<string, unknown>;
  if (preset !== undefined && preset !== null && typeof preset !== 'string') throw new RLConfigError([`preset: must be a preset name or null, got ${describe(preset)}`]);
  return resolveConfig((preset ?? null) as PresetName | null, fields);
}

/** The JSON form of a config (with its preset, if given, and only the fields that differ from it). */
export function configToJson(c: RLConfig, preset: PresetName | null = null): string {
  const base = resolveConfig(preset);
  const out: Record<string, unknown> = preset === null ? {} : { preset };
  for (const k of FIELD_NAMES) if (preset === null || !sameValue(c[k], base[k])) out[k] = c[k];
  return JSON.stringify(out, null, 2);
}

/**
 * URL parameters for a shareable link: `preset` (when given) and only the fields whose values differ from
 * that preset's. configFromUrlParams(configToUrlParams(c, p)) equals c.
 */
export function configToUrlParams(c: RLConfig, preset: PresetName | null): URLSearchParams {
  const base = resolveConfig(preset);
  const p = new URLSearchParams();
  if (preset !== null) p.set('preset', preset);
  for (const k of FIELD_NAMES) if (!sameValue(c[k], base[k])) p.set(k, encodeFieldText(c[k]));
  return p;
}

/**
 * The config a shareable URL describes: `preset` (absent: the defaults) and field overrides. Unknown parameters
 * are errors with a suggestion, except those named in `ignore` (the page's own parameters).
 */
export function configFromUrlParams(params: URLSearchParams, opts: { ignore?: readonly string[] } = {}): RLConfig {
  const errors: string[] = [];
  const overrides: Record<string, unknown> = {};
  const seen = new Set<string>();
  let preset: PresetName | null = null;
  for (const [key, text] of params) {
    if (opts.ignore?.includes(key)) continue;
    if (seen.has(key)) {
      errors.push(`${key}: given twice in the URL`);
      continue;
    }
    seen.add(key);
    if (key === 'preset') {
      if (isPresetName(text)) preset = text;
      else errors.push(`preset: must be one of ${PRESET_NAMES.join(', ')}; got ${JSON.stringify(text)}${suggestion(text, PRESET_NAMES)}`);
    } else if (!(key in RL_FIELDS)) {
      errors.push(unknownFieldMessage(key, RL_FIELDS));
    } else {
      const parsed = decodeFieldText(key, FIELD_SPECS[key as RLField], text);
      if (typeof parsed === 'object' && parsed !== null && 'error' in parsed) errors.push(parsed.error as string);
      else overrides[key] = parsed;
    }
  }
  if (errors.length) throw new RLConfigError(errors);
  return resolveConfig(preset, overrides);
}
