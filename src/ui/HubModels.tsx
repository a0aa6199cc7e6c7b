// The model field and hub models in the configure panel: one text field for the checkpoint (a shipped warm start or
// model, a hub id org/name[@revision], a URL, an imported local/<name>/ folder) with a list of choices; for a hub
// id, the check card (architecture or the refusal, memory plan, download size and host, the confirm button that is
// the origin confirmation, then progress per file with pause and resume); and the hub panel (endpoint, a token kept
// in memory only, each kept model with its size, resume and delete, the browser's quota and persistence).

import { useEffect, useState } from 'react';
import type { HubProgress, KeptModel } from '../hub/manager-types';
import { ACTIVE_DOWNLOAD_STATES } from '../store/status-line';
import { endpointProblem, hubModelOf, useLab } from '../store';
import { clock, formatBytes } from '../store/format';
import { ESTIMATE_ACCURACY, describeSeconds } from '../store/schema';
import { fieldHelpId } from './FieldInput';

/** Models the site ships as Hugging Face folders (public/models/), offered in the model field's list. */
const SHIPPED_MODELS = ['models/tiny-qwen2', 'models/tiny-llama'];

const hostOf = (endpoint: string) => {
  try {
    return new URL(endpoint).host;
  } catch {
    return endpoint;
  }
};

const rateText = (bytesPerSecond: number) => (bytesPerSecond > 0 ? `${formatBytes(bytesPerSecond)}/s` : '');

/** The model field: a text field with the shipped, kept and imported models as choices. */
export function ModelField() {
  const checkpoint = useLab((s) => s.draft.checkpoint);
  const model = useLab((s) => s.draft.model);
  const warmStarts = useLab((s) => s.warmStarts);
  const kept = useLab((s) => s.hubKept);
  const folder = useLab((s) => (s.folderImport?.status === 'done' ? s.folderImport : null));
  const setField = useLab((s) => s.setField);
  const value = typeof checkpoint === 'string' ? checkpoint : '';
  return (
    <>
      <input
        id="field-input-checkpoint"
        type="text"
        list="model-choices"
        aria-describedby={fieldHelpId('checkpoint')}
        data-testid="checkpoint-input"
        spellCheck={false}
        autoComplete="off"
        placeholder={`none: a fresh ${String(model)} model · or org/name from the hub`}
        value={value}
        onChange={(e) => setField('checkpoint', e.target.value.trim() === '' ? null : e.target.value.trim())}
      />
      <datalist id="model-choices">
        {warmStarts.map((w) => (
          <option key={w.name} value={w.name}>
            warm start ({w.task} {w.difficulty}, {(w.accuracy * 100).toFixed(0)}% held-out)
          </option>
        ))}
        {SHIPPED_MODELS.map((m) => (
          <option key={m} value={m}>
            shipped Hugging Face folder
          </option>
        ))}
        {kept.map((k) => (
          <option key={`${k.model}-${k.commit}`} value={k.model}>
            hub model kept in this browser{k.complete ? '' : ' (partial)'}
          </option>
        ))}
        {folder?.field === 'checkpoint' && <option value={`local/${folder.name}/`}>imported folder</option>}
      </datalist>
    </>
  );
}

/**
 * The model preset field when a checkpoint is set: where the architecture comes from, as text that wraps (a
 * disabled select cut it to "from the checkpoint: c"); an output, so the field's label still names it.
 */
export function ModelPresetField() {
  const checkpoint = useLab((s) => s.draft.checkpoint);
  if (typeof checkpoint !== 'string') return null;
  return (
    <output
      id="field-input-model"
      className="from-checkpoint"
      aria-describedby={fieldHelpId('model')}
      data-testid="model-from-checkpoint"
    >
      from the checkpoint: <code>{checkpoint}</code>
    </output>
  );
}

/** Below the model field: for a hub id, what Check fetches, the check card and the download's progress. */
export function HubCard() {
  const checkpoint = useLab((s) => s.draft.checkpoint);
  const model = hubModelOf(typeof checkpoint === 'string' ? checkpoint : null);
  const endpoint = useLab((s) => s.hubEndpoint);
  const state = useLab((s) => (model !== null && s.hubCheck?.model === model ? s.hubCheck : null));
  const progress = useLab((s) => (model !== null ? s.hubDownloads[model] : undefined));
  const kept = useLab((s) => (model !== null ? s.hubKept.find((k) => k.model === model) : undefined));
  const checkHubModel = useLab((s) => s.checkHubModel);
  const downloadHubModel = useLab((s) => s.downloadHubModel);
  if (model === null) return null;
  const host = hostOf(endpoint);
  const check = state?.check ?? null;
  const running = progress && ACTIVE_DOWNLOAD_STATES.includes(progress.state);
  const endpointBad = endpointProblem(endpoint);
  // Kept whole since the check (its download finished): the check's download size is spent.
  const keptWhole = kept?.complete === true || progress?.state === 'done';
  return (
    <div className="hub-card" data-testid="hub-card" data-status={state?.status ?? (kept?.complete ? 'kept' : 'new')}>
      <p className="hint" data-testid="hub-explain">
        {model} is a hub model.{' '}
        {kept?.complete
          ? `It is kept in this browser (${formatBytes(kept.bytes)}): runs read it from here, with no request.`
          : `Check fetches its config.json and tokenizer files (a few kB) from ${host}; nothing large is fetched until you confirm the download.`}
      </p>
      {endpointBad && <p className="field-error">{endpointBad}</p>}
      {!running && (
        <button
          type="button"
          data-testid="hub-check"
          disabled={state?.status === 'checking' || endpointBad !== null}
          onClick={() => void checkHubModel(model)}
        >
          {state?.status === 'checking' ? 'Checking…' : 'Check'}
        </button>
      )}
      {state?.status === 'failed' && (
        <p className="field-error" role="alert" data-testid="hub-check-message">
          {state.message}
        </p>
      )}
      {check && (
        <div className="hub-check" data-testid="hub-check-result">
          <p data-testid="hub-architecture">
            <strong>Architecture:</strong> {check.architecture}
            {check.commit ? ` (commit ${check.commit.slice(0, 12)})` : ''}
          </p>
          {check.refused ? (
            <p className="field-error" data-testid="hub-refused">
              The engine cannot run it: {check.refused}
            </p>
          ) : (
            <>
              {check.memory && (
                <details data-testid="hub-memory">
                  <summary>
                    Memory plan of this config: {formatBytes(check.memory.totalBytes)} at the peak
                    {check.memory.fits ? '' : ' (does not fit: see below)'}
                  </summary>
                  <pre>{check.memory.lines.join('\n')}</pre>
                </details>
              )}
              {check.estimate && (
                <p data-testid="hub-estimate" title={`Speed figures: ${check.estimate.source}. ${ESTIMATE_ACCURACY}`}>
                  One step of this config: {describeSeconds(check.estimate.seconds)} on this adapter (estimate)
                </p>
              )}
              <p className="hint" data-testid="hub-extras">
                {check.chatTemplate ? 'Chat template: yes.' : 'No chat template.'}{' '}
                {check.generation
                  ? `Sampling defaults (generation_config.json): ${Object.entries(check.generation)
                      .map(([k, v]) => `${k} ${v}`)
                      .join(', ')}.`
                  : ''}
              </p>
              {!keptWhole && (check.downloadBytes > 0 || !check.sizesKnown) ? (
                !running &&
                progress?.state !== 'paused' && (
                  <button
                    type="button"
                    className="primary"
                    data-testid="hub-download"
                    onClick={() => void downloadHubModel(model)}
                  >
                    Download {formatBytes(check.downloadBytes)}
                    {check.sizesKnown ? '' : ' (and files of unknown size)'} from {hostOf(check.origin)}
                  </button>
                )
              ) : (
                <p className="hint" data-testid="hub-ready">
                  Every file is kept in this browser: ready to run.
                </p>
              )}
            </>
          )}
        </div>
      )}
      {progress && <HubProgressView progress={progress} />}
    </div>
  );
}

/** A download's progress: the whole and each file (bytes, rate, time left), with pause or resume. */
function HubProgressView({ progress: p }: { progress: HubProgress }) {
  const pause = useLab((s) => s.pauseHubDownload);
  const download = useLab((s) => s.downloadHubModel);
  const running = ACTIVE_DOWNLOAD_STATES.includes(p.state);
  return (
    <div className="hub-progress" data-testid="hub-progress" data-state={p.state}>
      <p>
        <strong data-testid="hub-progress-state">
          {p.state}
          {p.state === 'retrying' && p.retry ? ` ${p.retry.retry} of ${p.retry.retries}` : ''}
        </strong>{' '}
        {formatBytes(p.bytes)}
        {p.total !== null ? ` of ${formatBytes(p.total)}` : ''}
        {running && p.rate > 0 ? ` · ${rateText(p.rate)}` : ''}
        {running && p.etaSeconds !== null ? ` · ${clock(p.etaSeconds * 1000)} left` : ''}{' '}
        {running ? (
          <button type="button" data-testid="hub-pause" onClick={() => pause(p.model)}>
            Pause
          </button>
        ) : (
          p.state !== 'done' && (
            <button type="button" data-testid="hub-resume" onClick={() => void download(p.model)}>
              Resume
            </button>
          )
        )}
      </p>
      {p.message && (
        <p className={p.state === 'failed' ? 'field-error' : 'hint'} data-testid="hub-progress-message">
          {p.message}
        </p>
      )}
      <ul className="hub-files">
        {p.files.map((f) => (
          <li key={f.name} data-testid="hub-file" data-file={f.name}>
            <span className="hub-line">
              <span className="hub-name">{f.name}</span>
              <span>
                {formatBytes(f.kept)}
                {f.size !== null ? ` of ${formatBytes(f.size)}` : ''}
                {p.current === f.name && running && p.rate > 0 ? ` · ${rateText(p.rate)}` : ''}
              </span>
            </span>
            <progress max={f.size ?? 1} value={f.size === null ? 0 : f.kept} />
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The hub panel: endpoint, token (memory only), each kept model with resume and delete, the quota. */
export function HubPanel() {
  const endpoint = useLab((s) => s.hubEndpoint);
  const tokenSet = useLab((s) => s.hubTokenSet);
  const kept = useLab((s) => s.hubKept);
  const storage = useLab((s) => s.hubStorage);
  const persistent = useLab((s) => s.hubPersistent);
  const listError = useLab((s) => s.hubListError);
  const downloads = useLab((s) => s.hubDownloads);
  const setHubEndpoint = useLab((s) => s.setHubEndpoint);
  const setHubToken = useLab((s) => s.setHubToken);
  const refresh = useLab((s) => s.refreshHubModels);
  const remove = useLab((s) => s.deleteHubModel);
  const download = useLab((s) => s.downloadHubModel);
  const persist = useLab((s) => s.persistStorage);
  const setField = useLab((s) => s.setField);
  const [token, setToken] = useState('');
  useEffect(() => {
    void refresh();
  }, [refresh]);
  const problem = endpointProblem(endpoint);
  const busy = (k: KeptModel) => {
    const state = downloads[k.model]?.state;
    return state !== undefined && ACTIVE_DOWNLOAD_STATES.includes(state);
  };
  return (
    <details
      className="hub-panel"
      data-testid="hub-panel"
      onToggle={(e) => {
        if ((e.target as HTMLDetailsElement).open) void refresh();
      }}
    >
      <summary>
        Hub models: endpoint, token, {kept.length} kept in this browser
        {storage ? ` (${formatBytes(storage.usage)} of ${formatBytes(storage.quota)} used)` : ''}
      </summary>
      <label className="hub-row">
        hf_endpoint{' '}
        <input
          type="url"
          data-testid="hub-endpoint"
          value={endpoint}
          spellCheck={false}
          onChange={(e) => setHubEndpoint(e.target.value.trim())}
        />
      </label>
      {problem && <p className="field-error">{problem}</p>}
      <label className="hub-row">
        token{' '}
        <input
          type="password"
          data-testid="hub-token"
          autoComplete="off"
          value={token}
          placeholder={tokenSet ? 'a token is held in memory' : 'for gated or private models'}
          onChange={(e) => setToken(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              setHubToken(token);
              setToken('');
            }
          }}
        />
        <button
          type="button"
          data-testid="hub-token-set"
          onClick={() => {
            setHubToken(token);
            setToken('');
          }}
        >
          {token ? 'Use token' : tokenSet ? 'Forget token' : 'Use token'}
        </button>
      </label>
      <p className="hint">
        The token is kept in this page's memory only, until it closes: it is sent to {hostOf(endpoint)} alone, never to
        the hub's download host, and never put in a link, an export, a saved run or the browser's storage.
      </p>
      {listError && (
        <p className="field-error" data-testid="hub-list-error">
          The kept models could not be listed: {listError}
        </p>
      )}
      <ul className="hub-kept" data-testid="hub-storage">
        {kept.length === 0 && <li className="hint">No hub model is kept in this browser.</li>}
        {kept.map((k) => (
          <li key={`${k.model}-${k.commit}`} data-testid="hub-kept" data-model={k.model} data-complete={k.complete}>
            <span className="hub-line">
              <button type="button" className="link hub-name" onClick={() => setField('checkpoint', k.model)}>
                {k.model}
              </button>
              <span>
                {!k.complete && !busy(k) && (
                  <button type="button" data-testid="hub-kept-resume" onClick={() => void download(k.model)}>
                    Resume
                  </button>
                )}
                <button type="button" data-testid="hub-delete" onClick={() => void remove(k.model)}>
                  Delete
                </button>
              </span>
            </span>
            <span className="hint">
              {formatBytes(k.bytes)}
              {k.total !== null && !k.complete ? ` of ${formatBytes(k.total)}` : ''} ·{' '}
              {k.complete ? 'complete' : 'partial'}
              {k.origin ? ` · from ${hostOf(k.origin)}` : ''}
            </span>
          </li>
        ))}
      </ul>
      <p className="hint" data-testid="hub-quota">
        {storage
          ? `This site uses ${formatBytes(storage.usage)} of the ${formatBytes(storage.quota)} the browser allows it.`
          : 'The browser does not say how much storage this site may use.'}{' '}
        {persistent ? (
          'Storage is persistent: the browser keeps it under disk pressure.'
        ) : (
          <button type="button" data-testid="hub-persist" onClick={() => void persist()}>
            Keep storage persistent
          </button>
        )}
      </p>
    </details>
  );
}
