// "Try a real model": a first RL experiment on an instruct model. Pick a task a person recognises and a model (the
// shipped tiny Qwen2 folder to try the path now, or a hub id whose published config.json is recorded), see each
// model's parameters, memory plan and seconds per step on this adapter before anything is downloaded, and put the
// experiment's config in the editor: chat template, LoRA, think/answer reward, the model's sampling defaults. A hub
// id goes into the checkpoint field as it is; the hub download takes it from there. Not the checkpoint field.
import { useEffect, useMemo, useState } from 'react';
import {
  ESTIMATE_ACCURACY,
  REAL_MODEL_CHOICES,
  REAL_MODEL_TASKS,
  describeSeconds,
  realModelExperiment,
  resolveConfig,
  type RealModelTask,
} from '../store/schema';
import { formatBytes } from '../store/format';
import { isEstimate, useLab } from '../store';

/** A parameter count in a table cell's width: 24K, 135M, 1.2B. */
function compactCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}B`;
  if (n >= 1e6) return `${Math.round(n / 1e6)}M`;
  return n >= 1e3 ? `${Math.round(n / 1e3)}K` : String(n);
}

export function RealModelExperiment() {
  const [open, setOpen] = useState(false);
  const [task, setTask] = useState<RealModelTask>('word_problems');
  const ready = useLab((s) => s.gpuStatus === 'ready');
  const view = useLab((s) => s.estimates.experiment);
  const request = useLab((s) => s.requestEstimates);
  const showConfig = useLab((s) => s.showConfig);
  const lessonOpen = useLab((s) => s.lesson !== null);
  const closeLesson = useLab((s) => s.closeLesson);
  const draftPrompts = useLab((s) => s.draft.prompts);
  // Your own prompt list is the editor's prompts field; without one the task cannot be sized or run yet.
  const prompts = typeof draftPrompts === 'string' && draftPrompts.trim() ? draftPrompts : null;
  // The experiment's config for each model: the GRPO preset under the experiment's knobs (null: the prompt list is bad).
  const configs = useMemo(() => {
    try {
      return REAL_MODEL_CHOICES.map((c) =>
        resolveConfig('grpo', { ...realModelExperiment(c.checkpoint, task), ...(task === 'prompts' && { prompts }) }),
      );
    } catch {
      return null;
    }
  }, [task, prompts]);
  useEffect(() => {
    if (open && ready && configs) request('experiment', configs);
  }, [open, ready, configs, request]);
  return (
    <section className="panel real-model" aria-labelledby="real-model-title" data-testid="real-model">
      <details open={open} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
        <summary>
          <h2 id="real-model-title" className="inline">
            Try a real model
          </h2>
        </summary>
        <p className="hint small">
          GRPO on an instruct model: its chat template, LoRA (r 16, alpha 32, every projection), the think/answer format
          reward, and its own sampling defaults (generation_config.json). Sizes and step times come from each model's
          config.json alone; nothing is downloaded until you start.
        </p>
        <label>
          Task{' '}
          <select data-testid="real-model-task" value={task} onChange={(e) => setTask(e.target.value as RealModelTask)}>
            {REAL_MODEL_TASKS.map((t) => (
              <option key={t.task} value={t.task}>
                {t.label}
              </option>
            ))}
          </select>
        </label>
        {task === 'prompts' && !prompts && (
          <p className="hint small" data-testid="real-model-prompts-missing">
            Paste your prompts (JSONL or CSV with prompt and answer) in the editor's prompts field first.
          </p>
        )}
        <table className="real-model-table" data-testid="real-model-table">
          <thead>
            <tr>
              <th scope="col">model</th>
              <th scope="col">params</th>
              <th scope="col">memory</th>
              <th scope="col" title="seconds per step on this adapter (estimate)">
                s / step
              </th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {REAL_MODEL_CHOICES.map((c, i) => {
              const e = view?.estimates[i];
              return (
                <tr key={c.checkpoint} data-testid="real-model-row" data-checkpoint={c.checkpoint}>
                  <th scope="row" title={c.note}>
                    {c.label}
                  </th>
                  {e && isEstimate(e) ? (
                    <>
                      <td title={e.parameters.toLocaleString('en-US')}>{compactCount(e.parameters)}</td>
                      <td title={e.memoryProblems.join('\n') || `weights stored ${e.weightDtype}`}>
                        {formatBytes(e.peakBytes)}
                        {e.memoryProblems.length > 0 && <strong className="warn"> (does not fit)</strong>}
                      </td>
                      <td data-testid="real-model-seconds" data-seconds={e.seconds}>
                        {describeSeconds(e.seconds).replace('about ', '~')}
                      </td>
                    </>
                  ) : (
                    <td colSpan={3} className="hint small">
                      {e ? e.problem : view?.error ? view.error : ready ? '…' : 'when the engine is ready'}
                    </td>
                  )}
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      data-testid="real-model-use"
                      disabled={!configs || (task === 'prompts' && !prompts)}
                      title={`put this experiment in the editor, checkpoint ${c.checkpoint}`}
                      onClick={() => {
                        if (!configs) return;
                        // Choosing the experiment leaves the open lesson, whose runs Start would otherwise wait for.
                        if (lessonOpen) closeLesson();
                        showConfig(configs[i], 'grpo');
                      }}
                    >
                      Use
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {view?.throughput && (
          <p className="hint small" data-testid="real-model-throughput">
            Step times on this adapter: {view.throughput}. {ESTIMATE_ACCURACY}
          </p>
        )}
      </details>
    </section>
  );
}
