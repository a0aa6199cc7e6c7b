// The rollout inspector: for a chosen step of the viewed run, each sampled group with its prompt, its
// completions, their rewards and advantages; every token coloured by a chosen quantity; hovering a token shows
// its numbers and its loss term with the values plugged in (store/explain.ts), checked against the trainer's; a
// legend says what each colour means under the chosen quantity. On demand, every group of the step in brief (the
// trainer keeps a summary of all of them): each group's completions sorted by reward with their advantages.
import { useEffect, useMemo, useRef, useState } from 'react';
import { rolloutKey, useLab } from '../store';
import { groupsByReward, type SortedGroup } from '../store/dynamics';
import {
  COLOR_LABELS,
  COLOR_QUANTITIES,
  colorLegend,
  colorScale,
  explainTokenLoss,
  lossShareTerms,
  tokenColor,
  tokenView,
  type ColorQuantity,
  type TokenView,
} from '../store/explain';
import { fmt } from '../store/format';
import type { GroupRecord, GroupSummary, RLConfig } from '../store/schema';
import { runView, shownRunId } from '../store/selectors';

/** Groups the all-groups view draws before "show all" (a big batch's hundreds of rows are drawn only when asked). */
const FIRST_GROUPS = 16;

/** A token's text with its spaces and newlines drawn (␣, ⏎). */
export function visible(text: string): string {
  return text.replace(/ /g, '␣').replace(/\n/g, '⏎');
}

/** What each colour means under the chosen quantity, drawn with the tokens' own colours. */
function ColorLegendRow({ colorBy, scale }: { colorBy: ColorQuantity; scale: number }) {
  const legend = colorLegend(colorBy, scale);
  return (
    <div className="color-legend" data-testid="color-legend" data-quantity={colorBy}>
      {legend.swatches.map((s) => (
        <span key={s.meaning} className="swatch-entry">
          <span className="swatch" style={{ background: s.color }} aria-hidden="true" /> {s.meaning}
        </span>
      ))}
      <span className="hint small">{legend.scaleNote}</span>
    </div>
  );
}

function TokenDetail({ t, config, alpha }: { t: TokenView; config: RLConfig | null; alpha: number }) {
  const ex = config ? explainTokenLoss(config, t, alpha) : null;
  const terms = config ? lossShareTerms(config) : null;
  const rows: [string, string][] = [
    ['token', `${JSON.stringify(t.text)} (position ${t.position})`],
    ['probability π_θ', fmt(Math.exp(t.logp))],
    ['log π_θ / log π_old / log π_sampler', `${fmt(t.logp)} / ${fmt(t.logpOld)} / ${fmt(t.logpSampler)}`],
    ['entropy H', fmt(t.entropy)],
    ['ratio ρ', fmt(t.ratio)],
    ['advantage A', fmt(t.advantage)],
    ['clipped', t.clipSide < 0 ? 'low' : t.clipSide > 0 ? 'high' : 'no'],
    ['KL estimate', fmt(t.kl)],
    ['weight w', fmt(t.weight)],
    ['loss share (recorded)', fmt(t.loss)],
  ];
  if (t.value !== null) rows.push(['value V_old', fmt(t.value)]);
  return (
    <div
      className="token-detail"
      data-testid="token-detail"
      data-agrees={ex?.agrees ?? ''}
      data-share={ex?.share ?? ''}
      data-recorded={t.loss}
    >
      <dl className="facts">
        {rows.map(([k, v]) => (
          <div key={k} className="fact">
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      {terms && (
        <p className="hint small" data-testid="loss-share-terms">
          {terms.weight}. {terms.share}.
        </p>
      )}
      {ex && (
        <pre className="formula" data-testid="token-formula">
          {ex.lines.join('\n')}
          {ex.note ? `\n(${ex.note})` : ''}
        </pre>
      )}
    </div>
  );
}

/** Each completion's tokens as the inspector shows them. */
/**
 * Where a key pressed on token `pos` of completion `row` goes: 'select' (Enter, Space), another token [row, pos]
 * (ArrowLeft/Right: the previous/next token, across completions; ArrowUp/Down: the same position in the
 * previous/next completion with tokens, or its last; Home/End: the completion's first/last token), or null.
 */
export function tokenKeyTarget(
  key: string,
  row: number,
  pos: number,
  lengthOf: (row: number) => number,
  rows: number,
): 'select' | [number, number] | null {
  if (key === 'Enter' || key === ' ') return 'select';
  const nextRow = (from: number, step: 1 | -1) => {
    for (let r = from + step; r >= 0 && r < rows; r += step) if (lengthOf(r) > 0) return r;
    return null;
  };
  switch (key) {
    case 'ArrowRight': {
      if (pos + 1 < lengthOf(row)) return [row, pos + 1];
      const r = nextRow(row, 1);
      return r === null ? null : [r, 0];
    }
    case 'ArrowLeft': {
      if (pos > 0) return [row, pos - 1];
      const r = nextRow(row, -1);
      return r === null ? null : [r, lengthOf(r) - 1];
    }
    case 'ArrowDown':
    case 'ArrowUp': {
      const r = nextRow(row, key === 'ArrowDown' ? 1 : -1);
      return r === null ? null : [r, Math.min(pos, lengthOf(r) - 1)];
    }
    case 'Home':
      return [row, 0];
    case 'End':
      return [row, lengthOf(row) - 1];
    default:
      return null;
  }
}

function groupViews(g: GroupRecord, texts: string[][]): TokenView[][] {
  return g.completions.map((c, ci) =>
    Array.from({ length: c.length }, (_, t) => tokenView(c, t, texts[ci]?.[t] ?? '?')),
  );
}

function Group({
  g,
  gi,
  texts,
  colorBy,
  scale,
  onHover,
  hover,
}: {
  g: GroupRecord;
  gi: number;
  texts: string[][];
  colorBy: ColorQuantity;
  scale: number;
  onHover: (h: [number, number, number]) => void;
  hover: [number, number, number] | null;
}) {
  const views = useMemo(() => groupViews(g, texts), [g, texts]);
  const table = useRef<HTMLTableElement>(null);
  // One Tab stop per group (the shown token, else the first): the arrow keys move among its tokens.
  const firstRow = views.findIndex((v) => v.length > 0);
  const stop: [number, number] = hover && hover[0] === gi ? [hover[1], hover[2]] : [firstRow, 0];
  const focusToken = (ci: number, pos: number) => {
    const el = table.current?.querySelector<HTMLElement>(`[data-token="${ci}:${pos}"]`);
    el?.focus();
  };
  const onKey = (e: React.KeyboardEvent, ci: number, pos: number) => {
    const rows = views.length;
    const target = tokenKeyTarget(e.key, ci, pos, (r) => views[r]?.length ?? 0, rows);
    if (target === 'select') onHover([gi, ci, pos]);
    else if (target) focusToken(target[0], target[1]);
    else return;
    e.preventDefault();
  };
  return (
    <div className="group" data-testid="group">
      <div className="group-head">
        group {g.index}: prompt <code>{visible(g.prompt)}</code> answer <code>{visible(g.answer)}</code>
      </div>
      <table className="completions" ref={table}>
        <thead>
          <tr>
            <th className="num">reward</th>
            <th className="num">A</th>
            <th>completion (tokens coloured by {COLOR_LABELS[colorBy]})</th>
            <th>verdict</th>
          </tr>
        </thead>
        <tbody>
          {g.completions.map((c, ci) => (
            <tr key={ci} data-testid="completion" data-reward={c.reward}>
              <td className="num">{fmt(c.reward)}</td>
              <td className="num">{c.tokens.advantage.length ? fmt(c.tokens.advantage[0]) : '—'}</td>
              <td className="tokens">
                {views[ci].map((t) => {
                  const shown = hover !== null && hover[0] === gi && hover[1] === ci && hover[2] === t.position;
                  return (
                    <span
                      key={t.position}
                      className={`tok${shown ? ' hovered' : ''}`}
                      data-testid="token"
                      data-token={`${ci}:${t.position}`}
                      style={{ background: tokenColor(t, colorBy, scale) }}
                      // Hover, keyboard focus, a click, Enter or Space show the token's numbers and its loss term
                      // below; the arrow keys move to the neighbouring tokens (TOKEN_KEYS).
                      role="button"
                      aria-pressed={shown}
                      aria-keyshortcuts="ArrowLeft ArrowRight ArrowUp ArrowDown Home End"
                      tabIndex={stop[0] === ci && stop[1] === t.position ? 0 : -1}
                      onMouseEnter={() => onHover([gi, ci, t.position])}
                      onFocus={() => onHover([gi, ci, t.position])}
                      onClick={() => onHover([gi, ci, t.position])}
                      onKeyDown={(e) => onKey(e, ci, t.position)}
                    >
                      {visible(t.text)}
                    </span>
                  );
                })}
                {!c.finished && <span className="cut"> (cut at L_max)</span>}
                {c.masked && <span className="cut"> (masked)</span>}
              </td>
              <td className="reason">{c.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One group of the all-groups view: completions sorted by reward, each with its advantage and verdict. */
function SummaryGroup({ g }: { g: SortedGroup }) {
  const outcome = g.passed === 0 ? 'all fail' : g.passed === g.completions.length ? 'all pass' : 'mixed';
  return (
    <div
      className="group"
      data-testid="summary-group"
      data-outcome={outcome}
      data-rewards={g.completions.map((c) => c.reward).join(',')}
    >
      <div className="group-head">
        group {g.index}: <code>{visible(g.prompt)}</code> → <code>{visible(g.answer)}</code> · {g.passed}/
        {g.completions.length} pass ({outcome})
      </div>
      <table className="completions">
        <thead>
          <tr>
            <th className="num">reward</th>
            <th className="num">A</th>
            <th>completion</th>
          </tr>
        </thead>
        <tbody>
          {g.completions.map((c, ci) => (
            <tr
              key={ci}
              className={c.passed ? 'passed' : undefined}
              data-testid="summary-completion"
              data-reward={c.reward}
              data-advantage={c.advantage}
            >
              <td className="num">{fmt(c.reward)}</td>
              <td className={`num ${c.advantage > 0 ? 'adv-pos' : c.advantage < 0 ? 'adv-neg' : ''}`}>
                {fmt(c.advantage)}
              </td>
              <td>
                <code>{visible(c.text)}</code>
                {!c.finished && <span className="cut"> (cut at L_max)</span>}
                {c.masked && <span className="cut"> (masked)</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Every group of a step, completions sorted by reward; the first FIRST_GROUPS until asked for the rest. */
function AllGroups({ batch, step }: { batch: GroupSummary[]; step: number }) {
  const [showAll, setShowAll] = useState(false);
  useEffect(() => setShowAll(false), [step]);
  const sorted = useMemo(() => groupsByReward(batch), [batch]);
  const shown = showAll ? sorted : sorted.slice(0, FIRST_GROUPS);
  const completions = sorted.reduce((a, g) => a + g.completions.length, 0);
  const passed = sorted.reduce((a, g) => a + g.passed, 0);
  const count = (o: string) =>
    sorted.filter((g) => (g.passed === 0 ? 'all fail' : g.passed === g.completions.length ? 'all pass' : 'mixed') === o)
      .length;
  return (
    <div data-testid="all-groups" data-groups={sorted.length}>
      <p className="hint small">
        {sorted.length} groups, {passed} of {completions} completions pass (verifier correct and ended with EOS):{' '}
        {count('all fail')} all fail, {count('mixed')} mixed, {count('all pass')} all pass. Completions sorted by
        reward; A is the completion's advantage (mean over its loss tokens).
      </p>
      <div className="all-groups">
        {shown.map((g) => (
          <SummaryGroup key={g.index} g={g} />
        ))}
      </div>
      {shown.length < sorted.length && (
        <button type="button" data-testid="show-all-groups" onClick={() => setShowAll(true)}>
          show all {sorted.length} groups
        </button>
      )}
    </div>
  );
}

export function Inspector() {
  const runId = useLab(shownRunId);
  const view = useLab((s) => runView(s, shownRunId(s)));
  const chosen = useLab((s) => s.inspectStep);
  const setStep = useLab((s) => s.setInspectStep);
  const colorBy = useLab((s) => s.colorBy);
  const setColorBy = useLab((s) => s.setColorBy);
  const inspectView = useLab((s) => s.inspectView);
  const setInspectView = useLab((s) => s.setInspectView);
  const rollouts = useLab((s) => s.rollouts);
  const requestRollouts = useLab((s) => s.requestRollouts);
  const runs = useLab((s) => s.runs);
  const [hover, setHover] = useState<[number, number, number] | null>(null);
  const steps = view?.rolloutSteps ?? [];
  const step = chosen ?? steps[steps.length - 1] ?? null;
  const entry = runId && step !== null ? rollouts[rolloutKey(runId, step)] : undefined;
  useEffect(() => {
    if (runId && step !== null && !entry) requestRollouts(runId, step);
  }, [runId, step, entry, requestRollouts]);
  useEffect(() => setHover(null), [runId, step]);
  const config = runs.find((r) => r.id === runId)?.config ?? null;
  // The entropy coefficient in effect at that step (it adapts with entropy_target).
  const alpha = useMemo(() => {
    const col = view?.table.column('entropy_coef');
    if (!view || !col || step === null) return config?.entropy_coef ?? 0;
    const s = view.table.step;
    for (let i = s.length - 1; i >= 0; i--) if (s[i] === step && Number.isFinite(col[i])) return col[i];
    return config?.entropy_coef ?? 0;
  }, [view, step, config]);
  const hovered = hover && entry ? entry.groups[hover[0]]?.completions[hover[1]] : undefined;
  // One scale for the whole step, so a colour means the same value in every group and the legend can name it.
  const scale = useMemo(
    () =>
      entry
        ? colorScale(
            entry.groups.flatMap((g, gi) => groupViews(g, entry.texts[gi] ?? []).flat()),
            colorBy,
          )
        : 0,
    [entry, colorBy],
  );
  return (
    <section
      className="panel inspector"
      aria-labelledby="inspector-title"
      data-testid="inspector"
      data-step={step ?? ''}
    >
      <div className="charts-head">
        <h2 id="inspector-title">Rollout inspector</h2>
        <label>
          step{' '}
          <select
            data-testid="inspect-step"
            value={step ?? ''}
            onChange={(e) => setStep(e.target.value ? Number(e.target.value) : null)}
            disabled={!steps.length}
          >
            {steps.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <span className="view-toggle" role="group" aria-label="what to list">
          <button
            type="button"
            data-testid="view-tokens"
            className={inspectView === 'tokens' ? '' : 'secondary'}
            aria-pressed={inspectView === 'tokens'}
            onClick={() => setInspectView('tokens')}
          >
            sampled groups, token by token{entry ? ` (${entry.groups.length})` : ''}
          </button>
          <button
            type="button"
            data-testid="view-all-groups"
            className={inspectView === 'all' ? '' : 'secondary'}
            aria-pressed={inspectView === 'all'}
            onClick={() => setInspectView('all')}
          >
            all groups by reward{entry?.batch ? ` (${entry.batch.length})` : ''}
          </button>
        </span>
        <label hidden={inspectView === 'all'}>
          colour by{' '}
          <select data-testid="color-by" value={colorBy} onChange={(e) => setColorBy(e.target.value as ColorQuantity)}>
            {COLOR_QUANTITIES.map((q) => (
              <option key={q} value={q}>
                {COLOR_LABELS[q]}
              </option>
            ))}
          </select>
        </label>
      </div>
      {!steps.length && (
        <p className="hint">Sampled groups of each step appear here while a run trains (or open a saved run).</p>
      )}
      {steps.length > 0 && !entry && <p className="hint">Loading the groups of step {step}…</p>}
      {entry &&
        inspectView === 'all' &&
        (entry.batch ? (
          <AllGroups batch={entry.batch} step={step!} />
        ) : (
          <p className="hint">
            This run kept no summary of every group at step {step} (runs recorded before it was kept).
          </p>
        ))}
      {entry && inspectView === 'tokens' && <ColorLegendRow colorBy={colorBy} scale={scale} />}
      {entry && inspectView === 'tokens' && (
        <div className="inspector-body">
          <div className="groups">
            {entry.groups.map((g, gi) => (
              <Group
                key={`${step}-${gi}`}
                g={g}
                gi={gi}
                texts={entry.texts[gi] ?? []}
                colorBy={colorBy}
                scale={scale}
                hover={hover}
                onHover={setHover}
              />
            ))}
          </div>
          <aside className="detail">
            {hover && hovered ? (
              <TokenDetail
                t={tokenView(hovered, hover[2], entry.texts[hover[0]]?.[hover[1]]?.[hover[2]] ?? '?')}
                config={config}
                alpha={alpha}
              />
            ) : (
              <p className="hint">
                Hover a token, or Tab to it (the arrow keys move among a group's tokens), to see its numbers and its
                loss term.
              </p>
            )}
          </aside>
        </div>
      )}
    </section>
  );
}
