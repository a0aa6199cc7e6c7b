// The configure panel, generated from RL_FIELDS and FIELD_SECTIONS: algorithm preset, task and difficulty,
// model or warm start, backend, and every knob by section (doc and formula on hover, range, inline message when
// invalid, a mark when it differs from the preset); the quantities derived from the config; the shareable link.
import { useMemo, useState } from 'react';
import { useLab, type FolderField } from '../store';
import { differsFromPreset } from '../store/config-diff';
import {
  FIELD_SECTIONS,
  SECTIONS,
  PRESET_INFO,
  PRESET_NAMES,
  PROMPT_LIST_TASK,
  derive,
  isPresetName,
  resolveConfig,
  taskChoices,
  taskFactories,
  taskFactoryOf,
  taskNames,
  type RLConfig,
  type RLField,
  type TaskFactory,
} from '../store/schema';
import { cpuBackendRefusal } from '../store/selectors';
import { FieldInput, fieldHelpId } from './FieldInput';
import { HubCard, HubPanel, ModelField, ModelPresetField } from './HubModels';
import { RewardFnEditor } from './RewardFnEditor';
import { ShareLink } from './ShareLink';

const OPEN_SECTIONS = new Set(['task', 'sampling', 'schedule']);
/** Fields whose values are paths or hub ids ("HuggingFaceTB/SmolLM2-135M-Instruct"): the input gets a line of its own. */
const STACKED_FIELDS: ReadonlySet<RLField> = new Set(['checkpoint', 'reward_model']);

function PresetPicker() {
  const preset = useLab((s) => s.preset);
  const applyPreset = useLab((s) => s.applyPreset);
  return (
    <div className="preset-row">
      <label htmlFor="preset-select">Algorithm</label>
      <select
        id="preset-select"
        data-testid="preset-select"
        value={preset ?? ''}
        onChange={(e) => applyPreset(isPresetName(e.target.value) ? e.target.value : null)}
      >
        {PRESET_NAMES.map((p) => (
          <option key={p} value={p}>
            {PRESET_INFO[p].label}
          </option>
        ))}
        <option value="">custom (every default)</option>
      </select>
      <span className="hint" data-testid="preset-description">
        {preset ? PRESET_INFO[preset].description : 'the defaults of every field; change any knob below'}
      </span>
    </div>
  );
}

function TaskSelect() {
  const task = useLab((s) => s.draft.task);
  const setTask = useLab((s) => s.setTask);
  return (
    <select
      id="field-input-task"
      aria-describedby={fieldHelpId('task')}
      data-testid="task-select"
      value={String(task)}
      onChange={(e) => setTask(e.target.value)}
    >
      {taskChoices.map((t) => (
        <option
          key={t}
          value={t}
          title={
            (taskNames as readonly string[]).includes(t)
              ? taskFactories[t as (typeof taskNames)[number]].description
              : 'your own prompts and answers (a JSONL or CSV file, in the prompts field)'
          }
        >
          {t}
        </option>
      ))}
    </select>
  );
}

/** The prompts field: a file picker whose file's text becomes the field (the list travels in the config), and a clear button. */
function PromptsPicker() {
  const prompts = useLab((s) => s.draft.prompts);
  const setField = useLab((s) => s.setField);
  const [name, setName] = useState<string | null>(null);
  const lines = typeof prompts === 'string' ? prompts.split('\n').filter((l) => l.trim() !== '').length : 0;
  return (
    <div className="prompts-picker">
      <input
        id="field-input-prompts"
        aria-describedby={fieldHelpId('prompts')}
        type="file"
        accept=".jsonl,.csv,.json,.txt,text/csv,application/json"
        data-testid="prompts-file"
        onChange={async (e) => {
          const file = e.target.files?.[0];
          e.target.value = '';
          if (!file) return;
          setName(file.name);
          setField('prompts', (await file.text()).trim() || null);
        }}
      />
      {typeof prompts === 'string' && (
        <span className="prompts-summary" data-testid="prompts-summary">
          {name ?? 'list'}: {lines} lines{' '}
          <button
            type="button"
            onClick={() => {
              setName(null);
              setField('prompts', null);
            }}
          >
            clear
          </button>
        </span>
      )}
    </div>
  );
}

/**
 * "Load a folder…": a directory picker whose model files the worker keeps (IndexedDB) as local/<name>/, then the
 * field names that path.
 */
function FolderPicker({ field }: { field: FolderField }) {
  const importFolder = useLab((s) => s.importFolder);
  const state = useLab((s) => (s.folderImport?.field === field ? s.folderImport : null));
  return (
    <div className="folder-picker">
      <label className="folder-button">
        Load a folder…
        <input
          type="file"
          data-testid={`folder-${field}`}
          // Chromium, Firefox and Safari pick directories with this attribute.
          {...({ webkitdirectory: '', directory: '' } as Record<string, string>)}
          multiple
          onChange={(e) => {
            const files = [...(e.target.files ?? [])].map((f) => ({
              relativePath: f.webkitRelativePath || f.name,
              arrayBuffer: () => f.arrayBuffer(),
            }));
            e.target.value = '';
            if (files.length) void importFolder(field, files);
          }}
        />
      </label>
      {state && (
        <span
          className={`folder-status ${state.status}`}
          data-testid={`folder-status-${field}`}
          data-status={state.status}
        >
          {state.status === 'reading' && `reading ${state.name}…`}
          {state.status === 'saving' && `keeping ${state.name} in this browser…`}
          {state.status === 'done' &&
            `${state.name}: ${state.files?.length ?? 0} files kept (${(state.files ?? []).join(', ')})`}
          {state.status === 'failed' && state.message}
        </span>
      )}
    </div>
  );
}

/** The draft's task factory, or null while its task fields cannot make one (a missing or malformed prompt list). */
function factoryOf(draft: Record<string, unknown>): TaskFactory | null {
  try {
    return taskFactoryOf(draft as Pick<RLConfig, 'task' | 'prompts' | 'answer_format'>);
  } catch {
    return null;
  }
}

function BackendPicker() {
  const backend = useLab((s) => s.backend);
  const gpuStatus = useLab((s) => s.gpuStatus);
  const setBackend = useLab((s) => s.setBackend);
  const refusal = useLab(cpuBackendRefusal);
  return (
    <div className="preset-row">
      <label htmlFor="backend-select">Backend</label>
      <select
        id="backend-select"
        data-testid="backend-select"
        value={backend}
        onChange={(e) => setBackend(e.target.value === 'cpu' ? 'cpu' : 'webgpu')}
      >
        <option value="webgpu" disabled={gpuStatus === 'unavailable'}>
          WebGPU (WGSL kernels){gpuStatus === 'unavailable' ? ': not available here' : ''}
        </option>
        <option value="cpu">CPU reference (slow: smallest models only)</option>
      </select>
      {backend === 'cpu' && (
        <span className={refusal ? 'field-error' : 'hint'} data-testid="backend-note">
          {refusal ?? 'the CPU twins of every kernel: correct, but 100-1000x slower than a GPU; use tiny batches'}
        </span>
      )}
    </div>
  );
}

function Derived({ config }: { config: RLConfig }) {
  const d = useMemo(() => {
    try {
      return derive(config);
    } catch {
      return null;
    }
  }, [config]);
  if (!d) return null;
  return (
    <ul className="derived" data-testid="derived">
      <li>
        N = B·G = {config.train_batch_size}·{config.num_generations} = {d.sequencesPerStep} completions per step,{' '}
        {d.optimizerStepsPerBatch} optimizer step
        {d.optimizerStepsPerBatch === 1 ? '' : 's'} per batch of {d.minibatchSize} sequences
      </li>
      <li>
        sequences of up to {d.sequenceLength} tokens ({d.maxPromptTokens} prompt + {d.maxCompletionLength} completion);
        task difficulty {d.difficulty}
      </li>
      {d.usesRatio && d.ratioIsOne && (
        <li className="note" data-testid="ratio-is-one">
          One update per batch (num_iterations 1, one minibatch): π_θ = π_old at that update, so ρ = 1 exactly and the
          clip never fires. Raise num_iterations or num_minibatches to see clipping.
        </li>
      )}
      {d.needsReference && <li>a frozen reference policy is kept for the KL term (β = {config.beta})</li>}
      {d.needsCritic && (
        <li>
          a critic is trained beside the policy (GAE, γ = {config.gamma}, λ = {config.lam})
        </li>
      )}
    </ul>
  );
}

export function ConfigPanel() {
  const draft = useLab((s) => s.draft);
  const preset = useLab((s) => s.preset);
  const config = useLab((s) => s.check.config);
  const otherErrors = useLab((s) => s.check.otherErrors);
  const otherWarnings = useLab((s) => s.check.otherWarnings);
  const differs = useMemo(() => differsFromPreset(draft, preset), [draft, preset]);
  const base = useMemo(() => resolveConfig(preset), [preset]);
  const factory = useMemo(() => factoryOf(draft), [draft.task, draft.prompts, draft.answer_format]);
  const range = factory?.difficultyRange;
  const custom: Partial<Record<RLField, React.ReactNode>> = {
    task: <TaskSelect />,
    checkpoint: <ModelField />,
    ...(typeof draft.checkpoint === 'string' && { model: <ModelPresetField /> }),
    prompts: <PromptsPicker />,
    reward_fn: <RewardFnEditor id="field-input-reward_fn" />,
  };
  const extra: Partial<Record<RLField, React.ReactNode>> = {
    checkpoint: (
      <>
        <FolderPicker field="checkpoint" />
        <HubCard />
        <HubPanel />
      </>
    ),
    reward_model: <FolderPicker field="reward_model" />,
  };
  return (
    <section
      className="panel config"
      aria-labelledby="config-title"
      data-testid="config-panel"
      data-valid={config !== null}
    >
      <h2 id="config-title">Configure</h2>
      <PresetPicker />
      <BackendPicker />
      {factory && range && (
        <p className="hint" data-testid="task-description">
          {factory.description}
          {range.min < range.max &&
            ` Difficulty: ${range.meaning}, ${range.min}-${range.max} (default ${range.default}).`}
        </p>
      )}
      {draft.task === PROMPT_LIST_TASK && draft.prompts === null && (
        <p className="hint">
          Task prompts trains on your own list: pick a JSONL or CSV file with prompt and answer in the prompts field
          below.
        </p>
      )}
      {Object.entries(FIELD_SECTIONS).map(([section, fields]) => (
        <details
          key={section}
          open={OPEN_SECTIONS.has(section)}
          className="config-section"
          data-testid={`section-${section}`}
        >
          <summary>
            {SECTIONS[section as keyof typeof SECTIONS].title}
            {fields.some((f) => differs.has(f)) && <span className="differs"> ●</span>}
          </summary>
          <div className="fields">
            {fields.map((f) => (
              <FieldInput
                key={f}
                name={f}
                differs={differs.has(f)}
                presetValue={base[f]}
                custom={custom[f]}
                extra={extra[f]}
                stacked={STACKED_FIELDS.has(f) || (f === 'model' && typeof draft.checkpoint === 'string')}
              />
            ))}
          </div>
        </details>
      ))}
      {otherErrors.map((e) => (
        <p key={e} className="field-error" role="alert">
          {e}
        </p>
      ))}
      {otherWarnings.map((w) => (
        <p key={w} className="field-warning">
          {w}
        </p>
      ))}
      {config && <Derived config={config} />}
      <ShareLink />
    </section>
  );
}
