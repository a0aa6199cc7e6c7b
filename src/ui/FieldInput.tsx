// One config field of the configure panel: its input (generated from the field's spec in RL_FIELDS), named by the
// field's name, with its doc and range on hover and as the input's accessible description, a mark when it differs
// from the preset, and its inline message when invalid. Reads and writes the store's draft, or the draft of a
// binding (objective B of the A/B panel); knows nothing about other fields.
import { useEffect, useState, Fragment } from 'react';
import { useLab } from '../store';
import { showValue } from '../store/config-diff';
import { DocText } from './DocText';
import {
  RL_FIELDS,
  SECTIONS,
  decodeFieldText,
  encodeFieldText,
  rangeText,
  type FieldSpec,
  type RLField,
} from '../store/schema';

/** Text of a value in a text input: null as empty, weights as name:w pairs (the URL's form). */
const toText = encodeFieldText;

/** Parses a text input's value by the field's own text rule; unparsable text is kept as is, so validation names it inline. */
function parseText(name: RLField, spec: FieldSpec, text: string): unknown {
  const v = decodeFieldText(name, spec, text);
  return v !== null && typeof v === 'object' && 'error' in v ? text : v;
}

/** The hover text of a field: its doc (with its formula), range and null meaning. */
export function fieldHelp(name: RLField): string {
  const spec: FieldSpec = RL_FIELDS[name];
  const parts = [`${name}: ${spec.doc}`];
  if (spec.kind === 'number')
    parts.push(
      `range ${rangeText(spec)}${spec.integer ? ', whole numbers' : ''}${spec.nullable ? `; empty = ${spec.nullMeans}` : ''}`,
    );
  if (spec.kind === 'enum') parts.push(`one of ${spec.values.join(', ')}`);
  if (spec.kind === 'string' || spec.kind === 'weights' || spec.kind === 'names')
    parts.push(`empty = ${spec.nullMeans}`);
  parts.push(`default ${showValue(spec.default)}`);
  const others = [
    spec.trl && `TRL ${spec.trl}`,
    spec.verl && `verl ${spec.verl}`,
    spec.openrlhf && `OpenRLHF ${spec.openrlhf}`,
  ].filter(Boolean);
  if (others.length) parts.push(`elsewhere: ${others.join('; ')}${spec.note ? ` (${spec.note})` : ''}`);
  parts.push(`math: ${SECTIONS[spec.section].math}`);
  return parts.join('\n');
}

/** The id of a field's help text, its input's accessible description (aria-describedby), custom inputs too. */
export function fieldHelpId(name: RLField, prefix = ''): string {
  return `${prefix}field-help-${name}`;
}

/** A field bound to another draft than the config panel's (objective B of the A/B), with its own id prefix. */
export interface FieldBinding {
  value: unknown;
  error?: string;
  warning?: string;
  set(value: unknown): void;
  /** Prefix of the input's id and test id, so the same field can sit in two panels. */
  prefix: string;
  /** What the dot compares against ("A", for objective B). */
  differsFrom: string;
}

export function FieldInput({
  name,
  differs,
  presetValue,
  custom,
  extra,
  binding,
  stacked = false,
}: {
  name: RLField;
  differs: boolean;
  presetValue: unknown;
  custom?: React.ReactNode;
  extra?: React.ReactNode;
  binding?: FieldBinding;
  /** The input on a line of its own below the name, the panel's whole width (a hub id or a path is long). */
  stacked?: boolean;
}) {
  const draftValue = useLab((s) => s.draft[name]);
  const draftError = useLab((s) => s.check.fieldErrors[name]);
  const draftWarning = useLab((s) => s.check.fieldWarnings[name]);
  const setDraftField = useLab((s) => s.setField);
  const value = binding ? binding.value : draftValue;
  const error = binding ? binding.error : draftError;
  const warning = binding ? binding.warning : draftWarning;
  const setField = (field: RLField, v: unknown) => (binding ? binding.set(v) : setDraftField(field, v));
  const prefix = binding?.prefix ?? '';
  const spec: FieldSpec = RL_FIELDS[name];
  const [text, setText] = useState(toText(value));
  const [focused, setFocused] = useState(false);
  useEffect(() => {
    if (!focused) setText(toText(value));
  }, [value, focused]);
  const id = `${prefix}field-input-${name}`;
  // The accessible name is the field's name (the label); its help (the hover text) is the description.
  const helpId = fieldHelpId(name, prefix);
  // A typed field (one line or several): the text as typed, parsed into the draft on every change.
  const textProps = {
    value: text,
    'aria-describedby': helpId,
    'aria-invalid': !!error,
    onFocus: () => setFocused(true),
    onBlur: () => setFocused(false),
    onChange: (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => {
      setText(e.target.value);
      setField(name, parseText(name, spec, e.target.value));
    },
  };
  let input: React.ReactNode;
  if (custom) input = custom;
  else if (spec.kind === 'enum') {
    input = (
      <select id={id} aria-describedby={helpId} value={String(value)} onChange={(e) => setField(name, e.target.value)}>
        {spec.values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    );
  } else if (spec.kind === 'boolean') {
    input = (
      <input
        id={id}
        type="checkbox"
        aria-describedby={helpId}
        checked={value === true}
        onChange={(e) => setField(name, e.target.checked)}
      />
    );
  } else if (spec.kind === 'string' && spec.multiline) {
    // Source code or a data file: several lines, monospaced, no spell checking.
    input = (
      <textarea
        id={id}
        className="field-text"
        rows={5}
        spellCheck={false}
        placeholder={spec.nullMeans}
        {...textProps}
      />
    );
  } else {
    input = (
      <input
        id={id}
        type="text"
        inputMode={spec.kind === 'number' ? 'decimal' : 'text'}
        placeholder={
          spec.kind === 'number' && spec.nullable
            ? spec.nullMeans
            : spec.kind === 'string' || spec.kind === 'weights' || spec.kind === 'names'
              ? spec.nullMeans
              : ''
        }
        {...textProps}
      />
    );
  }
  const range = spec.kind === 'number' ? rangeText(spec) : '';
  return (
    <div
      className={`field${stacked ? ' stacked' : ''}${error ? ' invalid' : ''}`}
      data-testid={`${prefix}field-${name}`}
      data-differs={differs}
      data-invalid={!!error}
      data-value={toText(value)}
    >
      <label htmlFor={id} className="field-label" title={fieldHelp(name)}>
        {/* Breaks only after an underscore (max_completion_ / length), never mid-word; <wbr> adds no text to the name. */}
        <span className="field-name">
          {name.split('_').map((part, i) => (
            <Fragment key={i}>
              {i > 0 && (
                <>
                  _<wbr />
                </>
              )}
              {part}
            </Fragment>
          ))}
        </span>
        {/* A space, so the name reads "lr differs from the preset", not "lrdiffers ...". */}
        {differs && ' '}
        {differs && (
          <span
            className="differs"
            role="img"
            title={`differs from ${binding?.differsFrom ?? 'the preset'} (${showValue(presetValue)})`}
            aria-label={`differs from ${binding?.differsFrom ?? 'the preset'}`}
          >
            ●
          </span>
        )}
        {/* Out of the label's name (aria-hidden); the input's description (aria-describedby) reads it. */}
        <span className="field-doc" id={helpId} aria-hidden="true">
          <DocText text={fieldHelp(name)} />
        </span>
      </label>
      <div className="field-input">
        {input}
        {range && <span className="field-range">{range}</span>}
      </div>
      {error && (
        <div className="field-error" role="alert" data-testid={`${prefix}field-error-${name}`}>
          {error}
        </div>
      )}
      {!error && warning && <div className="field-warning">{warning}</div>}
      {extra}
    </div>
  );
}
