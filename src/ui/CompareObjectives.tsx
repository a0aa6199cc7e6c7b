// The objective A/B panel: A is the current run's objective; the person picks B (a preset applied to the run's config,
// or the run's config itself, then any knob edited with the config panel's field inputs), the batch (the latest step,
// or a fresh one from the current policy), and compares. Shown: the difference in words with numbers, the gradient
// share by length and correctness, the tokens that differ most, each completion's tokens under A and B side by side
// (coloured as in the inspector, the top differing tokens outlined), and one completion's per-token numbers.
import { useMemo, useState } from 'react';
import {
  COMPARE_FIELDS,
  compareBlocker,
  compareDependencyOf,
  compareEdits,
  currentRunConfig,
  useLab,
  type ComparisonView,
} from '../store';
import {
  COMPARE_LABELS,
  COMPARE_QUANTITIES,
  clipName,
  comparedColor,
  comparedLegend,
  comparedScale,
  comparedTokens,
  highlightedTokens,
  pct,
  type CompareQuantity,
  type ComparedToken,
} from '../store/compare';
import { fmt } from '../store/format';
import { PRESET_INFO, PRESET_NAMES, isPresetName, sameValue } from '../store/schema';
import { FieldInput } from './FieldInput';
import { visible } from './Inspector';

function BKnobs() {
  const draft = useLab((s) => s.compareDraft);
  const check = useLab((s) => s.compareCheck);
  const preset = useLab((s) => s.comparePreset);
  const a = useLab(currentRunConfig);
  const setField = useLab((s) => s.setCompareField);
  if (!draft || !check || !a) return null;
  const edited = new Set(compareEdits(a.config, preset, draft));
  const fromA = new Set(COMPARE_FIELDS.filter((f) => !sameValue(draft[f], a.config[f])));
  return (
    <details className="config-section" data-testid="compare-knobs">
      <summary>
        B's knobs ({fromA.size} differ from A{edited.size ? `, ${edited.size} edited` : ''})
      </summary>
      <div className="fields">
        {COMPARE_FIELDS.map((f) => (
          <FieldInput
            key={f}
            name={f}
            differs={fromA.has(f)}
            presetValue={a.config[f]}
            binding={{
              value: draft[f],
              error: check.fieldErrors[f],
              warning: check.fieldWarnings[f],
              set: (v) => setField(f, v),
              prefix: 'b-',
              differsFrom: 'A',
            }}
          />
        ))}
      </div>
      {check.otherErrors.map((e) => (
        <p key={e} className="field-error" role="alert">
          {e}
        </p>
      ))}
    </details>
  );
}

const tokenTitle = (side: string, t: ComparedToken) =>
  t.masked
    ? `${side}: not in the loss`
    : `${side}: loss share ${pct(t.share)}, d loss/d log p ${fmt(t.dLogp)} (${pct(t.gradShare)} of the gradient), clip ${clipName(t.clip)}, A ${fmt(t.advantage)}, ratio ${fmt(t.ratio)}, w ${fmt(t.weight)}`;

function TokenLine({
  tokens,
  side,
  q,
  scale,
  marked,
  row,
  onPick,
}: {
  tokens: ComparedToken[];
  side: 'A' | 'B';
  q: CompareQuantity;
  scale: number;
  marked: Set<string>;
  row: number;
  onPick(): void;
}) {
  return (
    // The line is one control: a click or Enter/Space on it picks its row (one tab stop per line, not per token).
    <span
      className="tokens"
      data-testid={`compare-line-${side}`}
      role="button"
      tabIndex={0}
      onClick={onPick}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          onPick();
        }
      }}
    >
      <span className="side-label">{side}</span>
      {tokens.map((t) => (
        <span
          key={t.position}
          className={`tok${marked.has(`${row}:${t.position}`) ? ' differs-most' : ''}`}
          data-testid="compare-token"
          style={{ background: comparedColor(t, q, scale) }}
          title={tokenTitle(side, t)}
        >
          {visible(t.text)}
        </span>
      ))}
    </span>
  );
}

function Result({ view }: { view: ComparisonView }) {
  const { comparison: c, explanation: e, texts } = view;
  const [q, setQ] = useState<CompareQuantity>('share');
  const top = e.topTokens[0];
  const [group, setGroup] = useState(top ? c.rows[top.row].group : 0);
  const [picked, setPicked] = useState(top ? top.row : 0);
  const scale = useMemo(() => comparedScale(c, q), [c, q]);
  const marked = useMemo(() => highlightedTokens(e), [e]);
  const groups = c.rows.length / c.groupSize;
  const rows = c.rows.map((r, i) => ({ r, i })).filter((x) => x.r.group === group);
  const side = (k: 'a' | 'b', row: number) => comparedTokens(c, c[k], row, texts[row] ?? []);
  const pickedA = side('a', picked);
  const pickedB = side('b', picked);
  return (
    <div className="compare-result" data-testid="compare-result">
      <p>
        <strong>{view.labelA}</strong> vs <strong>{view.labelB}</strong>,{' '}
        {c.source === 'latest'
          ? `on the batch of step ${c.step} at the parameters after it`
          : `on a fresh batch sampled after step ${c.step}`}
        .
      </p>
      <ul className="compare-explanation" data-testid="compare-explanation">
        {e.lines.map((l) => (
          <li key={l}>{l}</li>
        ))}
      </ul>
      <table className="compare-cells" data-testid="compare-cells">
        <thead>
          <tr>
            <th>completions (long: more than {fmt(e.medianLength)} tokens)</th>
            <th className="num">count</th>
            <th className="num">gradient share A</th>
            <th className="num">gradient share B</th>
          </tr>
        </thead>
        <tbody>
          {e.cells.map((cell) => (
            <tr key={`${cell.long}${cell.correct}`}>
              <td>
                {cell.long ? 'long' : 'short'} {cell.correct ? 'correct' : 'wrong'}
              </td>
              <td className="num">{cell.completions}</td>
              <td className="num">{pct(cell.gradShareA)}</td>
              <td className="num">{pct(cell.gradShareB)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Tokens where A and B differ most</h3>
      <table className="compare-top" data-testid="compare-top">
        <thead>
          <tr>
            <th>token</th>
            <th>where</th>
            <th className="num">d loss/d log p A</th>
            <th className="num">B</th>
            <th className="num">gradient share A</th>
            <th className="num">B</th>
            <th>clip A / B</th>
          </tr>
        </thead>
        <tbody>
          {e.topTokens.map((t) => (
            <tr
              key={`${t.row}:${t.position}`}
              onClick={() => {
                setGroup(c.rows[t.row].group);
                setPicked(t.row);
              }}
            >
              <td className="tokens">
                <span className="tok differs-most">{visible(texts[t.row]?.[t.position] ?? '')}</span>
              </td>
              <td>
                group {c.rows[t.row].group} #{t.row % c.groupSize}, token {t.position}
              </td>
              <td className="num">{fmt(t.dLogpA)}</td>
              <td className="num">{fmt(t.dLogpB)}</td>
              <td className="num">{pct(t.gradShareA)}</td>
              <td className="num">{pct(t.gradShareB)}</td>
              <td>
                {clipName(t.clipA)} / {clipName(t.clipB)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="compare-controls">
        <label>
          group{' '}
          <select data-testid="compare-group" value={group} onChange={(ev) => setGroup(Number(ev.target.value))}>
            {Array.from({ length: groups }, (_, g) => (
              <option key={g} value={g}>
                {g}: {c.rows[g * c.groupSize].prompt}
              </option>
            ))}
          </select>
        </label>{' '}
        <label>
          colour by{' '}
          <select data-testid="compare-color" value={q} onChange={(ev) => setQ(ev.target.value as CompareQuantity)}>
            {COMPARE_QUANTITIES.map((k) => (
              <option key={k} value={k}>
                {COMPARE_LABELS[k]}
              </option>
            ))}
          </select>
        </label>
        <span className="color-legend">
          {comparedLegend(q).map((s) => (
            <span key={s.meaning} className="legend-item">
              <span className="tok" style={{ background: s.color }}>
                &nbsp;
              </span>{' '}
              {s.meaning}
            </span>
          ))}
          <span className="legend-item">
            <span className="tok differs-most">&nbsp;</span> among the tokens that differ most
          </span>
        </span>
      </div>
      <table className="compare-tokens" data-testid="compare-tokens">
        <thead>
          <tr>
            <th>#</th>
            <th className="num">reward</th>
            <th>tokens under A and B (click one for its numbers)</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ r, i }) => (
            <tr key={i} className={i === picked ? 'picked' : ''} data-testid="compare-completion">
              <td>
                {i % c.groupSize} {r.correct ? '✓' : '✗'}
              </td>
              <td className="num">{fmt(r.reward)}</td>
              <td className="compare-sides">
                <TokenLine
                  tokens={side('a', i)}
                  side="A"
                  q={q}
                  scale={scale}
                  marked={marked}
                  row={i}
                  onPick={() => setPicked(i)}
                />
                <TokenLine
                  tokens={side('b', i)}
                  side="B"
                  q={q}
                  scale={scale}
                  marked={marked}
                  row={i}
                  onPick={() => setPicked(i)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>
        Group {c.rows[picked].group} #{picked % c.groupSize}, token by token ({c.rows[picked].length} tokens,{' '}
        {c.rows[picked].correct ? 'correct' : 'wrong'})
      </h3>
      <table className="compare-token-table" data-testid="compare-token-table">
        <thead>
          <tr>
            <th>token</th>
            <th className="num">loss share A</th>
            <th className="num">B</th>
            <th className="num">d loss/d log p A</th>
            <th className="num">B</th>
            <th>clip A</th>
            <th>clip B</th>
            <th className="num">advantage A</th>
            <th className="num">B</th>
          </tr>
        </thead>
        <tbody>
          {pickedA.map((ta, t) => {
            const tb = pickedB[t];
            return (
              <tr
                key={t}
                className={marked.has(`${picked}:${t}`) ? 'differs-most' : ''}
                data-testid="compare-token-row"
              >
                <td className="tokens">
                  <span className="tok">{visible(ta.text)}</span>
                </td>
                <td className="num">{ta.masked ? '—' : pct(ta.share)}</td>
                <td className="num">{tb.masked ? '—' : pct(tb.share)}</td>
                <td className="num">{fmt(ta.dLogp)}</td>
                <td className="num">{fmt(tb.dLogp)}</td>
                <td>{clipName(ta.clip)}</td>
                <td>{clipName(tb.clip)}</td>
                <td className="num">{fmt(ta.advantage)}</td>
                <td className="num">{fmt(tb.advantage)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function CompareObjectives() {
  const source = useLab((s) => s.compareSource);
  const setSource = useLab((s) => s.setCompareSource);
  const preset = useLab((s) => s.comparePreset);
  const hasDraft = useLab((s) => s.compareDraft !== null);
  const pick = useLab((s) => s.pickCompareObjective);
  const run = useLab((s) => s.runComparison);
  const blocker = useLab(compareBlocker);
  const pending = useLab((s) => s.comparePending !== null);
  const error = useLab((s) => s.compareError);
  // Strings, so the selection is stable between renders (the dependency object is built anew each time).
  const dependencyReason = useLab((s) => compareDependencyOf(s)?.reason ?? null);
  const dependencyFix = useLab((s) => {
    const d = compareDependencyOf(s);
    return d
      ? Object.entries(d.fix)
          .map(([k, v]) => `${k} to ${String(v)}`)
          .join(', ')
      : null;
  });
  const fixDependency = useLab((s) => s.fixCompareDependency);
  const view = useLab((s) => s.comparison);
  const step = useLab((s) => s.progress.step);
  const a = useLab(currentRunConfig);
  // A saved run on the charts that is not the engine's (after a reload, say): open its saved state to compare on it.
  const openable = useLab((s) => {
    const h = s.viewRunId && s.viewRunId !== s.progress.runId ? s.runs.find((r) => r.id === s.viewRunId) : undefined;
    return h && !h.origin && h.status !== 'imported' && h.savedStep > 0 ? h : null;
  });
  const training = useLab((s) => s.progress.status === 'running' || s.progress.status === 'pausing');
  const openRunToCompare = useLab((s) => s.openRunToCompare);
  return (
    <section className="panel compare" aria-labelledby="compare-title" data-testid="compare-panel">
      <h2 id="compare-title">Compare objectives on the same batch</h2>
      <p className="hint">
        A is this run's objective{a ? ` (${a.preset ? PRESET_INFO[a.preset].label : 'custom'})` : ''}. B is any preset
        applied to the run's config, or the run's config with knobs changed. Both are evaluated by the objective kernel
        training uses, on identical rollouts and parameters, each with its own advantages from the same rewards; the run
        itself does not change.
      </p>
      {openable && (
        <p className="compare-controls">
          <button
            type="button"
            className="secondary"
            data-testid="compare-open-saved"
            disabled={training}
            onClick={() => openRunToCompare(openable.id)}
            title={training ? 'pause the training run first' : undefined}
          >
            Open "{openable.name}" at its saved step {openable.savedStep} to compare on it
          </button>{' '}
          <span className="hint">(nothing is trained; A becomes its objective)</span>
        </p>
      )}
      <div className="compare-controls">
        <span>batch:</span>
        <label>
          <input
            type="radio"
            name="compare-source"
            data-testid="compare-source-latest"
            checked={source === 'latest'}
            onChange={() => setSource('latest')}
          />{' '}
          the latest step{step ? ` (${step})` : ''}
        </label>
        <label>
          <input
            type="radio"
            name="compare-source"
            data-testid="compare-source-fresh"
            checked={source === 'fresh'}
            onChange={() => setSource('fresh')}
          />{' '}
          a fresh batch from the current policy
        </label>
      </div>
      <div className="compare-controls">
        <label htmlFor="compare-preset">objective B</label>{' '}
        <select
          id="compare-preset"
          data-testid="compare-preset"
          value={hasDraft ? (preset ?? 'run') : ''}
          disabled={!a}
          onChange={(ev) => pick(isPresetName(ev.target.value) ? ev.target.value : null)}
        >
          <option value="" disabled>
            choose…
          </option>
          <option value="run">this run's config (then change knobs)</option>
          {PRESET_NAMES.map((p) => (
            <option key={p} value={p}>
              {PRESET_INFO[p].label}
            </option>
          ))}
        </select>{' '}
        <button type="button" data-testid="compare-run" disabled={blocker !== null} onClick={run}>
          {pending ? 'Comparing…' : 'Compare'}
        </button>{' '}
        {blocker && !pending && <span className="hint">{blocker}</span>}
      </div>
      {dependencyReason && (
        <p className="compare-fix" data-testid="compare-fix">
          {dependencyReason}.{' '}
          <button type="button" className="secondary" data-testid="compare-fix-apply" onClick={fixDependency}>
            Set B's {dependencyFix}
          </button>
        </p>
      )}
      <BKnobs />
      {error && (
        <p className="field-error" role="alert" data-testid="compare-error">
          {error}
        </p>
      )}
      {view && <Result key={view.id} view={view} />}
    </section>
  );
}
