// The "Run elsewhere" panel's body: the edited experiment exported for TRL, verl or OpenRLHF (the script or launch
// command, copy and download buttons, one self-unpacking download of every file) and the mapping table of every
// config field. Loaded lazily when the panel is opened (Lab.tsx), so the generators stay off the startup path.
import { useEffect, useMemo, useState } from 'react';
import { useLab, type ExportTarget, type Setting } from '../store';
import {
  DEFAULT_MODEL_PATH,
  EXPORT_TARGETS,
  TARGET_LABELS,
  TARGET_VERSIONS,
  bundleName,
  bundleScript,
  exportExperiment,
  verlPromptLengthKey,
} from '../store/export';
import { save } from './Downloads';

function settingText(s: Setting): string {
  const v = Array.isArray(s.value) ? s.value.join(' ') : String(s.value);
  return `${s.added ? '+' : ''}${s.key}${s.value === true && s.key.startsWith('--') ? '' : ` = ${v}`}`;
}

export default function RunElsewhere() {
  const config = useLab((s) => s.check.config);
  const preset = useLab((s) => s.preset);
  const [target, setTarget] = useState<ExportTarget>('trl');
  const [model, setModel] = useState(DEFAULT_MODEL_PATH);
  const [copied, setCopied] = useState(false);
  // verl's data.max_prompt_length is counted in the model's tokens: the worker has the model's tokenizer and counts.
  const counted = useLab((s) => s.verlPromptLength);
  const loadVerlPromptLength = useLab((s) => s.loadVerlPromptLength);
  useEffect(() => {
    if (config && target === 'verl') loadVerlPromptLength(config);
  }, [config, target, loadVerlPromptLength]);
  const forConfig = config !== null && counted?.key === verlPromptLengthKey(config) ? counted : null;
  const promptLength = forConfig?.promptLength ?? null;
  const tokenizerProblem = forConfig?.problem ?? null;
  const tokenizerPending = target === 'verl' && !promptLength && !tokenizerProblem;
  // A value the trainer's files cannot hold (a model name that is not a hub name or path, a NUL) is refused by
  // the exporter with a message naming the field; it is shown beside the model input instead of the files.
  const result = useMemo(() => {
    if (!config || tokenizerPending) return null;
    try {
      const options = { preset, model: model.trim() || DEFAULT_MODEL_PATH, ...(promptLength && { promptLength }) };
      return { exported: exportExperiment(target, config, options) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  }, [config, preset, target, model, promptLength, tokenizerPending]);
  const modelInput = (
    <>
      <label htmlFor="export-model">Model: a Hugging Face format checkpoint folder or a hub model name</label>
      <input id="export-model" data-testid="elsewhere-model" value={model} onChange={(e) => setModel(e.target.value)} />
    </>
  );
  // The trainer tabs stay when one trainer refuses the experiment, so another can be picked.
  const targetTabs = (
    <div className="export-targets" role="tablist" aria-label="Trainer">
      {EXPORT_TARGETS.map((t) => (
        <button
          key={t}
          type="button"
          role="tab"
          aria-selected={t === target}
          className={t === target ? '' : 'secondary'}
          data-testid={`elsewhere-target-${t}`}
          onClick={() => {
            setTarget(t);
            setCopied(false);
          }}
        >
          {TARGET_LABELS[t]}
        </button>
      ))}
    </div>
  );
  if (config && tokenizerPending)
    return (
      <div className="run-elsewhere" data-testid="run-elsewhere-body" data-target={target}>
        {targetTabs}
        <p className="hint" data-testid="elsewhere-tokenizer-pending">
          Reading the model's tokenizer to count verl's data.max_prompt_length in its tokens...
        </p>
      </div>
    );
  if (!result) return <p className="hint">Fix the marked fields to export the experiment.</p>;
  if ('error' in result)
    return (
      <div className="run-elsewhere" data-testid="run-elsewhere-body" data-target={target}>
        {targetTabs}
        {modelInput}
        <p className="message error" role="alert" data-testid="elsewhere-error">
          Cannot export: {result.error}
        </p>
      </div>
    );
  const { exported } = result;
  const entry = exported.files.find((f) => f.path === exported.entry)!;
  const commented = exported.rows.filter((r) => r.settings.length === 0).length;
  return (
    <div className="run-elsewhere" data-testid="run-elsewhere-body" data-target={target}>
      {targetTabs}
      {target === 'verl' && tokenizerProblem && (
        <p className="message warning" role="alert" data-testid="elsewhere-tokenizer-problem">
          The model's tokenizer could not be read ({tokenizerProblem}), so data.max_prompt_length below is the task's
          longest prompt in characters + 1, which verl's chat template can exceed: set it to the prompt's length in the
          model's tokens before running.
        </p>
      )}
      <p className="hint">
        Written against {TARGET_VERSIONS[target]}. {exported.keys.length} settings; {commented} of{' '}
        {exported.rows.length} fields have no setting of their own and are comments saying why.
      </p>
      {modelInput}
      <div className="export-actions">
        <button
          type="button"
          data-testid="elsewhere-copy"
          onClick={() => {
            void navigator.clipboard?.writeText(entry.text).then(() => setCopied(true));
          }}
        >
          {copied ? 'Copied' : `Copy ${entry.path}`}
        </button>
        <button
          type="button"
          className="secondary"
          data-testid="elsewhere-download-entry"
          onClick={() => save(entry.path, 'text/plain', entry.text)}
        >
          Download {entry.path}
        </button>
        <button
          type="button"
          className="secondary"
          data-testid="elsewhere-download-bundle"
          onClick={() => save(bundleName(target), 'text/x-shellscript', bundleScript(exported))}
        >
          Download every file ({bundleName(target)})
        </button>
      </div>
      <p className="hint">
        The bundle writes {exported.files.map((f) => f.path).join(', ')} into a folder:{' '}
        <code>sh {bundleName(target)}</code>.
      </p>
      <pre className="export-script" data-testid="elsewhere-script">
        {entry.text}
      </pre>
      <table className="export-mapping" data-testid="elsewhere-mapping">
        <thead>
          <tr>
            <th>lab field</th>
            <th>value</th>
            <th>{TARGET_LABELS[target]}</th>
            <th>note</th>
          </tr>
        </thead>
        <tbody>
          {exported.rows.map((r) => (
            <tr key={r.field} data-field={r.field} data-mapped={r.settings.length > 0}>
              <td>
                <code>{r.field}</code>
              </td>
              <td>
                <code>{r.lab}</code>
              </td>
              <td>
                {r.settings.length ? (
                  r.settings.map((s) => <code key={s.key}>{settingText(s)}</code>)
                ) : (
                  <span className="hint">none</span>
                )}
              </td>
              <td>{r.comment}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
