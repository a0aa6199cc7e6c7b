// The reward_fn editor of the configure panel: a large, monospaced, resizable text area (Tab indents by two spaces)
// whose text is compiled in the reward sandbox once typing pauses (through the worker; the page never parses or
// runs it), with the problem shown at the person's own line and column; and "test on one batch", which scores the
// task's answers (right and altered) through the same sandbox and lists each completion's reward.
import { useEffect, useRef, useState } from 'react';
import { useLab } from '../store';
import { fmt } from '../store/format';
import { RL_FIELDS, decodeFieldText, encodeFieldText } from '../store/schema';
import type { RewardFnProblem } from '../rl/rewards/reward-fn-trial';
import { fieldHelpId } from './FieldInput';

/** How long typing must pause before the text is compiled. */
const CHECK_DELAY_MS = 400;

/** The problem's line of `source` with a caret under its column, when the sandbox placed it. */
function ProblemPlace({ source, problem }: { source: string; problem: RewardFnProblem }) {
  const at = problem.at;
  if (!at) return null;
  const line = source.split('\n')[at.line - 1] ?? '';
  return (
    <pre className="reward-fn-place" data-testid="reward-fn-place" data-line={at.line} data-column={at.column ?? ''}>
      {`${at.line} | ${line}\n`}
      {at.column !== null ? `${' '.repeat(String(at.line).length + 3 + at.column - 1)}^` : ''}
    </pre>
  );
}

export function RewardFnEditor({ id }: { id: string }) {
  const value = useLab((s) => s.draft.reward_fn);
  const setField = useLab((s) => s.setField);
  const checkRewardFn = useLab((s) => s.checkRewardFn);
  const tryRewardFn = useLab((s) => s.tryRewardFn);
  const check = useLab((s) => s.rewardFnCheck);
  const trial = useLab((s) => s.rewardFnTrial);
  const [text, setText] = useState(encodeFieldText(value));
  const [focused, setFocused] = useState(false);
  // Escape arms a way out: the next Tab moves focus as Tab does elsewhere (WCAG 2.1.2, no keyboard trap).
  const escaped = useRef(false);
  useEffect(() => {
    if (!focused) setText(encodeFieldText(value));
  }, [value, focused]);
  // Compiled once typing pauses (and for a text that arrived by a link, a preset or a resumed run).
  useEffect(() => {
    const t = setTimeout(() => checkRewardFn(text), CHECK_DELAY_MS);
    return () => clearTimeout(t);
  }, [text, checkRewardFn]);
  const edit = (next: string) => {
    setText(next);
    const v = decodeFieldText('reward_fn', RL_FIELDS.reward_fn, next);
    setField('reward_fn', v !== null && typeof v === 'object' && 'error' in v ? next : v);
  };
  const current = check?.source === text ? check : null;
  const state = !text.trim() ? 'empty' : !current || current.pending ? 'checking' : current.problem ? 'error' : 'ok';
  const shownTrial = trial?.source === text ? trial : null;
  return (
    <div className="reward-fn-editor" data-testid="reward-fn-editor" data-state={state}>
      <textarea
        id={id}
        className="field-text reward-fn-text"
        data-testid="reward-fn-text"
        rows={10}
        spellCheck={false}
        autoCapitalize="off"
        autoComplete="off"
        placeholder={'(prompt, completion, item) => completion.length > 0 ? 1 : 0'}
        value={text}
        aria-invalid={state === 'error'}
        aria-describedby={`${fieldHelpId('reward_fn')} ${id}-status`}
        onFocus={() => setFocused(true)}
        onBlur={() => {
          setFocused(false);
          escaped.current = false;
        }}
        onChange={(e) => edit(e.target.value)}
        onKeyDown={(e) => {
          // Tab indents (two spaces); Escape then Tab leaves the box, as the keyboard expects.
          if (e.key === 'Escape') {
            escaped.current = true;
            return;
          }
          const leaving = escaped.current;
          escaped.current = false;
          if (leaving || e.key !== 'Tab' || e.shiftKey || e.altKey || e.ctrlKey || e.metaKey) return;
          e.preventDefault();
          const el = e.currentTarget;
          const { selectionStart: a, selectionEnd: b } = el;
          edit(`${text.slice(0, a)}  ${text.slice(b)}`);
          requestAnimationFrame(() => el.setSelectionRange(a + 2, a + 2));
        }}
      />
      <div className="reward-fn-status" id={`${id}-status`} aria-live="polite">
        {state === 'checking' && <span className="hint">compiling in the sandbox…</span>}
        {state === 'ok' && (
          <span className="ok" data-testid="reward-fn-ok">
            compiles
          </span>
        )}
        {state === 'error' && current?.problem && (
          <div className="field-error" role="alert" data-testid="reward-fn-error">
            {current.problem.message}
            <ProblemPlace source={text} problem={current.problem} />
          </div>
        )}
      </div>
      {text.trim() && (
        <div className="reward-fn-trial">
          <button
            type="button"
            className="secondary"
            data-testid="reward-fn-try"
            disabled={shownTrial?.pending || state === 'error'}
            onClick={tryRewardFn}
            title="score the task's correct answers and altered ones with this function, in its sandbox"
          >
            {shownTrial?.pending ? 'Testing…' : 'Test on one batch'}
          </button>
          {shownTrial?.problem && !shownTrial.pending && (
            <div className="field-error" role="alert" data-testid="reward-fn-trial-error">
              {shownTrial.problem.message}
            </div>
          )}
          {shownTrial?.rows && (
            <table className="results" data-testid="reward-fn-trial">
              <thead>
                <tr>
                  <th>prompt</th>
                  <th>completion</th>
                  <th className="num">reward</th>
                  <th>parts</th>
                </tr>
              </thead>
              <tbody>
                {shownTrial.rows.map((r, i) => (
                  <tr key={i} data-testid="reward-fn-trial-row" data-kind={r.kind} data-reward={r.reward}>
                    <td className="mono">{r.prompt}</td>
                    <td className="mono" title={r.kind === 'correct' ? "the task's answer" : 'the answer altered'}>
                      {r.completion}{' '}
                      <span className="hint small">({r.kind === 'correct' ? 'correct' : 'altered'})</span>
                    </td>
                    <td className="num">{fmt(r.reward)}</td>
                    <td>
                      {Object.entries(r.parts)
                        .map(([k, v]) => `${k} ${fmt(v)}`)
                        .join(', ')}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </div>
  );
}
