// The RL config's text forms at the boundaries: a JSON file (an object of fields, optionally with "preset"), and
// URL parameters for a shareable link (the preset and only the fields that differ from it). Both decode through
// the schema's field rules and validate once; bad JSON is reported with line, column and what was expected.

import {
  clipText,
  decodeFieldText,
  describe,
  encodeFieldText,
  isFieldName,
  quote,
  sameValue,
  suggestion,
  unknownFieldMessage,
} from '../fields';
import { jsonErrorMessage } from './messages';
import { PRESET_NAMES, isPresetName, type PresetName } from './presets';
import { FIELD_NAMES, FIELD_SPECS, RL_FIELDS, type RLConfig, type RLField } from './schema';
import { RLConfigError, checkConfig, resolveConfig } from './validate';
import { DEFAULT_CONFIG } from './schema';
import { PRESETS } from './presets';

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
  if (preset !== undefined && preset !== null && typeof preset !== 'string')
    throw new RLConfigError([`preset: must be a preset name or null, got ${describe(preset)}`]);
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
  const { preset, overrides, errors } = readUrlParams(params, opts.ignore ?? []);
  if (errors.length) throw new RLConfigError(errors);
  return resolveConfig(preset, overrides);
}

/** A link read field by field: its preset, the fields that decoded, and the problems of the rest. */
interface UrlParamsRead {
  preset: PresetName | null;
  overrides: Record<string, unknown>;
  errors: string[];
}

function readUrlParams(params: URLSearchParams, ignore: readonly string[]): UrlParamsRead {
  const errors: string[] = [];
  const overrides: Record<string, unknown> = {};
  const seen = new Set<string>();
  let preset: PresetName | null = null;
  for (const [key, text] of params) {
    if (ignore.includes(key)) continue;
    if (seen.has(key)) {
      errors.push(`${clipText(key)}: given twice in the URL`);
      continue;
    }
    seen.add(key);
    if (key === 'preset') {
      if (isPresetName(text)) preset = text;
      else
        errors.push(
          `preset: must be one of ${PRESET_NAMES.join(', ')}; got ${quote(text)}${suggestion(text, PRESET_NAMES)}`,
        );
    } else if (!isFieldName(RL_FIELDS, key)) {
      errors.push(unknownFieldMessage(key, RL_FIELDS));
    } else {
      const parsed = decodeFieldText(key, FIELD_SPECS[key as RLField], text);
      if (typeof parsed === 'object' && parsed !== null && 'error' in parsed) errors.push(parsed.error as string);
      else overrides[key] = parsed;
    }
  }
  return { preset, overrides, errors };
}

/** A shared link read as far as it goes: the config of its good fields, and the problems of the fields left out. */
export interface LinkConfig {
  config: RLConfig;
  /** The link's preset when it named a valid one (else null: the defaults). */
  preset: PresetName | null;
  /** One message per problem, each starting with the field it is about; empty when the whole link was used. */
  problems: string[];
  /** The fields whose values the link gave but the config does not use (a bad value, or a rule they broke). */
  dropped: RLField[];
}

/**
 * The config a shared link describes, keeping what can be kept: unknown parameters and undecodable values are
 * named and skipped; a field whose value breaks its rule, or a rule between fields it takes part in, is named
 * and left at the preset's value. Never throws for a bad link.
 */
export function configFromUrlParamsKeeping(
  params: URLSearchParams,
  opts: { ignore?: readonly string[] } = {},
): LinkConfig {
  const { preset, overrides, errors } = readUrlParams(params, opts.ignore ?? []);
  const problems = [...errors];
  const dropped: RLField[] = [];
  const base = { ...DEFAULT_CONFIG, ...(preset === null ? {} : PRESETS[preset]) };
  const kept: Record<string, unknown> = { ...overrides };
  // Each round drops the overridden fields the remaining problems name; a problem naming only fields the link
  // did not set (a rule between a link field and a preset field) drops every override left, so this ends.
  for (;;) {
    const check = checkConfig({ ...base, ...kept });
    if (!check.errors.length) break;
    const named = Object.keys(kept).filter((k) =>
      check.errors.some((e) => e.startsWith(`${k}:`) || e.includes(` ${k} `)),
    );
    const drop = named.length ? named : Object.keys(kept);
    if (!drop.length) throw new RLConfigError(check.errors); // the preset itself is invalid: a bug, not a bad link
    for (const e of check.errors) if (!problems.includes(e)) problems.push(e);
    for (const k of drop) {
      delete kept[k];
      dropped.push(k as RLField);
    }
  }
  return { config: resolveConfig(preset, kept), preset, problems, dropped };
}
