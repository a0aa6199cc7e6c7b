// Saved runs (IndexedDB, in the engine worker): the list, open one on the charts, overlay two or more with the
// diff of their configs, resume, delete, export (metrics CSV and JSONL, rollouts JSONL, the checkpoint as the
// folder transformers loads, zipped or written into a picked folder) and import an exported file or a TRL, verl or OpenRLHF metrics log (overlaid like any run). A run
// offers only the actions it can do (selectors' runExports, canResumeRun). Import errors and storage use are shown
// here. The current run's row shows its live step (from the engine's progress), not the step its saved header had.
// A seed group's runs sit under one row of their own (expand it for each seed's row), with the choice of drawing the
// group as its statistic across seeds with a band, or every seed as a line. Each run is labelled by what sets it
// apart (run-names.ts) and can be renamed; any run with a saved state, a finished one too, can be opened to compare
// objectives on it.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { useLab } from '../store';
import { configDiff, showValue } from '../store/config-diff';
import { fmt, formatBytes } from '../store/format';
import { MAX_RUN_NAME, TRAINER_TITLES, type ExportKind, type RunHeader } from '../store/schema';
import { savedRunNames } from '../store/run-names';
import { seedStatistic } from '../store/seed-bands';
import { runsListRows, seedGroupLabel, type SeedGroupView } from '../store/seed-groups';
import { canResumeRun, chartReward, chartRunIds, isCurrentRun, runExports, runStep } from '../store/selectors';
import { runColor } from './colors';
import { canWriteFolders, pickExportFolder } from './Downloads';

const EXPORT_LABELS: Record<ExportKind, string> = {
  'metrics-csv': 'metrics CSV',
  'metrics-jsonl': 'metrics JSONL',
  'rollouts-jsonl': 'rollouts JSONL',
  checkpoint: 'checkpoint .zip',
};

/** What the checkpoint export is, on its buttons. */
const CHECKPOINT_EXPORT_TITLE =
  'The policy as the folder AutoModelForCausalLM.from_pretrained loads (float32 weights, config.json, generation_config.json, the tokenizer files with the chat template) and, for a LoRA run, the adapter folder PeftModel.from_pretrained loads.';

/** Where a run was trained and imported from, for its row. */
function whereFrom(h: RunHeader): string {
  if (h.origin) return `${TRAINER_TITLES[h.origin.trainer]} · imported from ${h.origin.file}`;
  return `${h.backend === 'cpu' ? 'CPU' : 'WebGPU'}${h.importedFrom ? ` · imported from ${h.importedFrom}` : ''}`;
}

/** One formatter for every row: creating one per call (toLocaleString) costs milliseconds each. */
const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' });

/** The run's name, edited in place: Enter or Save keeps it, Escape or Cancel leaves it; empty gives the default back. */
function RenameForm({ h, done }: { h: RunHeader; done(): void }) {
  const renameRun = useLab((s) => s.renameRun);
  const [name, setName] = useState(h.name);
  return (
    <form
      className="rename"
      data-testid="run-rename-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (name !== h.name) renameRun(h.id, name);
        done();
      }}
    >
      <input
        data-testid="run-rename-input"
        aria-label="run name (empty: the default name)"
        value={name}
        maxLength={MAX_RUN_NAME}
        // biome-ignore lint/a11y/noAutofocus: the person asked to rename this run just now
        autoFocus
        onChange={(e) => setName(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') done();
        }}
      />{' '}
      <button type="submit" data-testid="run-rename-save">
        Save
      </button>{' '}
      <button type="button" className="secondary" onClick={done}>
        Cancel
      </button>
    </form>
  );
}

function RunRow({ h, label, inGroup = false }: { h: RunHeader; label: string; inGroup?: boolean }) {
  const viewRunId = useLab((s) => s.viewRunId);
  const overlay = useLab((s) => s.overlay);
  const live = useLab((s) => isCurrentRun(s, h.id));
  const step = useLab((s) => runStep(s, h));
  const resumable = useLab((s) => canResumeRun(s, h));
  const exports = useLab(useShallow((s) => runExports(s, h)));
  const openRun = useLab((s) => s.openRun);
  const toggleOverlay = useLab((s) => s.toggleOverlay);
  const resumeRun = useLab((s) => s.resumeRun);
  const deleteRun = useLab((s) => s.deleteRun);
  const exportRun = useLab((s) => s.exportRun);
  // A seed of a group drawn as a band is on the charts through its group, not as an overlay of its own.
  const inBand = useLab((s) => h.seedGroup !== undefined && (s.seedGroupView[h.seedGroup.id] ?? 'band') === 'band');
  const openRunToCompare = useLab((s) => s.openRunToCompare);
  const [confirming, setConfirming] = useState(false);
  const [renaming, setRenaming] = useState(false);
  // Any run with a saved trainer state can be opened (not trained) to compare objectives on it; not the current run.
  const comparable = !live && !h.origin && h.status !== 'imported' && h.savedStep > 0;
  const viewing = viewRunId === h.id;
  const overlaid = overlay.includes(h.id);
  // The charts' smoothed reward at the run's last point; the stored last step's until its records are here.
  const smoothed = useLab((s) => chartReward(s, h.id));
  const reward = smoothed ?? h.lastMetrics.reward;
  return (
    <tr
      data-testid="run-row"
      data-run-id={h.id}
      data-status={h.status}
      data-step={step}
      data-name={h.name}
      data-label={label}
      data-origin={h.origin?.trainer}
      data-seed-group={h.seedGroup?.id}
      className={[viewing && 'viewing', inGroup && 'seed-member'].filter(Boolean).join(' ')}
    >
      <td>
        <input
          type="checkbox"
          data-testid="overlay-toggle"
          title={
            inBand
              ? "drawn in its group's band; choose every seed to draw the seeds one by one"
              : 'overlay on the charts'
          }
          checked={overlaid && !inBand}
          disabled={viewing || inBand}
          onChange={() => toggleOverlay(h.id)}
          aria-label={`overlay ${label}`}
        />
      </td>
      <td>
        {renaming ? (
          <RenameForm h={h} done={() => setRenaming(false)} />
        ) : (
          <>
            <button
              type="button"
              className="link"
              data-testid="run-open"
              onClick={() => openRun(h.id)}
              title={`${h.name}: show on the charts and in the inspector`}
            >
              {label}
            </button>{' '}
            <button
              type="button"
              className="link rename-link"
              data-testid="run-rename"
              onClick={() => setRenaming(true)}
              aria-label={`rename ${label}`}
              title="rename this run"
            >
              rename
            </button>
          </>
        )}
        <div className="hint small">
          {DATE.format(h.createdAt)} · {whereFrom(h)}
        </div>
      </td>
      <td data-testid="run-state">{live ? 'current' : h.status}</td>
      <td className="num">
        {/* A foreign log's config is not known (the header holds the lab's defaults), so neither is its length. */}
        {h.origin ? step : `${step}/${h.config.steps}`}
      </td>
      <td
        className="num"
        data-testid="run-reward"
        data-smoothed={smoothed !== undefined}
        title={
          smoothed !== undefined
            ? undefined
            : h.origin
              ? 'the last logged reward, unsmoothed: open the run to chart its records'
              : "the last step, unsmoothed: the run's records are loading"
        }
      >
        {reward !== undefined ? fmt(reward) : '—'}
      </td>
      <td className="actions">
        {resumable && (
          <button
            type="button"
            className="secondary"
            data-testid="run-resume-row"
            onClick={() => resumeRun(h.id)}
            title={`continue from the saved state at step ${h.savedStep}`}
          >
            Resume
          </button>
        )}
        {comparable && (
          <button
            type="button"
            className="secondary"
            data-testid="run-compare-row"
            onClick={() => openRunToCompare(h.id)}
            title={`open the saved state at step ${h.savedStep} (without training) to compare objectives on it`}
          >
            A/B
          </button>
        )}
        {exports.map((kind) => (
          <button
            key={kind}
            type="button"
            className="secondary"
            data-testid={`export-${kind}`}
            onClick={() => exportRun(h.id, kind)}
            title={kind === 'checkpoint' ? CHECKPOINT_EXPORT_TITLE : undefined}
          >
            {EXPORT_LABELS[kind]}
          </button>
        ))}
        {exports.includes('checkpoint') && canWriteFolders() && (
          <button
            type="button"
            className="secondary"
            data-testid="export-checkpoint-folder"
            title={`${CHECKPOINT_EXPORT_TITLE} Writes the folders into a folder you pick (this browser can) instead of a .zip.`}
            onClick={async () => {
              if (await pickExportFolder()) exportRun(h.id, 'checkpoint');
            }}
          >
            checkpoint folder…
          </button>
        )}
        {confirming ? (
          <>
            <button type="button" className="danger" data-testid="run-delete-confirm" onClick={() => deleteRun(h.id)}>
              Delete for good
            </button>
            <button type="button" className="secondary" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" className="secondary" data-testid="run-delete" onClick={() => setConfirming(true)}>
            Delete
          </button>
        )}
      </td>
    </tr>
  );
}

const GROUP_VIEWS: { view: SeedGroupView; text: string; title: string }[] = [
  {
    view: 'band',
    text: 'band',
    title: 'one line per metric: the median (or IQM) across seeds at each step, in its 95% bootstrap band',
  },
  { view: 'seeds', text: 'every seed', title: 'each seed as a line of its own' },
];

/** A seed group: one row (open it on the charts, band or every seed), and when expanded each seed's own row. */
function SeedGroupRows({
  groupId,
  members,
  labels,
}: {
  groupId: string;
  members: RunHeader[];
  labels: Map<string, string>;
}) {
  const [expanded, setExpanded] = useState(false);
  const view = useLab((s) => s.seedGroupView[groupId] ?? 'band');
  const viewing = useLab((s) => members.some((h) => h.id === s.viewRunId));
  const liveId = useLab((s) => members.find((h) => isCurrentRun(s, h.id))?.id);
  // The current run's state is the engine's (its listed header may lag a step behind).
  const liveStatus = useLab((s) => (liveId ? s.progress.status : null));
  const setView = useLab((s) => s.setSeedGroupView);
  const openGroup = useLab((s) => s.openSeedGroup);
  const size = members[0].seedGroup!.size;
  const counts = new Map<string, number>();
  for (const h of members) {
    const state = h.id === liveId && liveStatus ? liveStatus : h.status;
    counts.set(state, (counts.get(state) ?? 0) + 1);
  }
  const rewards = useLab(
    useShallow((s) =>
      members.map((h) => chartReward(s, h.id) ?? h.lastMetrics.reward).filter((r): r is number => Number.isFinite(r)),
    ),
  );
  const label = seedGroupLabel(members);
  return (
    <>
      <tr
        data-testid="seed-group-row"
        data-group-id={groupId}
        data-runs={members.length}
        data-view={view}
        data-expanded={expanded}
        className={`seed-group${viewing ? ' viewing' : ''}`}
      >
        <td>
          <button
            type="button"
            className="link"
            data-testid="seed-group-expand"
            aria-expanded={expanded}
            onClick={() => setExpanded(!expanded)}
            title={expanded ? 'hide the seeds' : 'show each seed'}
          >
            {expanded ? '▾' : '▸'}
          </button>
        </td>
        <td>
          <button
            type="button"
            className="link"
            data-testid="seed-group-open"
            onClick={() => openGroup(groupId)}
            title={`${label}: show the group on the charts`}
          >
            {label}
          </button>
          <div className="hint small">
            seed group · {members.length} of {size} runs · {DATE.format(members[0].createdAt)} · {whereFrom(members[0])}
          </div>
        </td>
        <td data-testid="seed-group-state">{[...counts].map(([state, n]) => `${n} ${state}`).join(', ')}</td>
        <td className="num">
          {members.filter((h) => h.status === 'done').length}/{size} done
        </td>
        <td className="num" title="median of the seeds' rewards as the charts draw them at their last point (smoothed)">
          {rewards.length ? fmt(seedStatistic(rewards, 'median')) : '—'}
        </td>
        <td className="actions">
          <span className="segmented" role="group" aria-label="draw the group as">
            {GROUP_VIEWS.map((v) => (
              <button
                key={v.view}
                type="button"
                className={view === v.view ? '' : 'secondary'}
                aria-pressed={view === v.view}
                data-testid={`seed-view-${v.view}`}
                title={v.title}
                onClick={() => setView(groupId, v.view)}
              >
                {v.text}
              </button>
            ))}
          </span>
        </td>
      </tr>
      {expanded && members.map((h) => <RunRow key={h.id} h={h} label={labels.get(h.id) ?? h.name} inGroup />)}
    </>
  );
}

function ConfigDiffTable() {
  // The runs the charts draw (a lesson's own while one is open).
  const ids = useLab(useShallow(chartRunIds));
  const runs = useLab((s) => s.runs);
  const charted = useMemo(
    () => ids.map((id) => runs.find((r) => r.id === id)).filter((r): r is RunHeader => !!r),
    [ids, runs],
  );
  // A run imported from another trainer's log has no known config (its header holds the lab's defaults): left out.
  const shown = useMemo(() => charted.filter((r) => !r.origin), [charted]);
  const foreign = useMemo(() => charted.filter((r) => r.origin), [charted]);
  const rows = useMemo(() => configDiff(shown), [shown]);
  const labels = savedRunNames(runs);
  if (charted.length < 2) return null;
  return (
    <div className="config-diff" data-testid="config-diff" data-rows={rows.length}>
      <h3>Config diff of the runs on the charts</h3>
      {foreign.length > 0 && (
        <p className="hint" data-testid="config-diff-foreign">
          Not compared: {foreign.map((r) => labels.get(r.id) ?? r.name).join(', ')} (a log from another trainer holds no
          lab config).
        </p>
      )}
      {shown.length < 2 ? null : rows.length === 0 ? (
        <p className="hint">Same config: the runs differ only by chance (or by where they were run).</p>
      ) : (
        <table className="results">
          <thead>
            <tr>
              <th>field</th>
              {shown.map((r) => (
                <th key={r.id} style={{ color: runColor(charted.indexOf(r)) }} title={r.name}>
                  {labels.get(r.id) ?? r.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.field} data-testid="diff-row" data-field={d.field}>
                <td>{d.field}</td>
                {d.values.map((v, i) => (
                  <td key={i}>{showValue(v)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** How many uncharted names the summary line spells out before "...". */
const UNCHARTED_SHOWN = 8;

/** An imported log's names beyond those charted: a count, the first few, and a way to chart any one of them. */
function UnchartedPicker({ runId, uncharted }: { runId: string; uncharted: { count: number; names: string[] } }) {
  const chartMetric = useLab((s) => s.chartMetric);
  const [name, setName] = useState(uncharted.names[0] ?? '');
  const shown = uncharted.names.slice(0, UNCHARTED_SHOWN);
  return (
    <form
      className="hint uncharted"
      data-testid="import-uncharted"
      data-count={uncharted.count}
      onSubmit={(e) => {
        e.preventDefault();
        chartMetric(runId, name);
      }}
    >
      +{uncharted.count} more metrics not charted: {shown.join(', ')}
      {uncharted.count > shown.length ? ', ...' : ''}.{' '}
      <label>
        Chart one{' '}
        <input
          data-testid="uncharted-pick"
          list="uncharted-names"
          value={name}
          onChange={(e) => setName(e.target.value)}
          maxLength={500}
        />
      </label>
      <datalist id="uncharted-names">
        {uncharted.names.map((n) => (
          <option key={n} value={n} />
        ))}
      </datalist>{' '}
      <button type="submit" className="secondary" data-testid="uncharted-chart">
        Chart it
      </button>
    </form>
  );
}

export function RunsPanel() {
  const runs = useLab((s) => s.runs);
  const storage = useLab((s) => s.storage);
  const importError = useLab((s) => s.importError);
  const lastImported = useLab((s) => s.lastImported);
  const importFile = useLab((s) => s.importFile);
  const addNotice = useLab((s) => s.addNotice);
  const labels = savedRunNames(runs);
  const rows = useMemo(() => runsListRows(runs), [runs]);
  const smoothing = useLab((s) => s.smoothing);
  // Each saved run's records, asked for once the table is near the view (not at page load), so its reward column
  // is the charts' smoothed value. An imported log keeps its last logged reward: its records can hold thousands of
  // names, loaded only when it is opened.
  const loadRunRecords = useLab((s) => s.loadRunRecords);
  const asked = useRef(new Set<string>());
  const panel = useRef<HTMLElement>(null);
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    const el = panel.current;
    if (seen || !el) return;
    if (typeof IntersectionObserver === 'undefined') return setSeen(true);
    const io = new IntersectionObserver((es) => es.some((e) => e.isIntersecting) && setSeen(true), {
      rootMargin: '400px',
    });
    io.observe(el);
    return () => io.disconnect();
  }, [seen]);
  const unloaded = useLab(
    useShallow((s) => s.runs.filter((h) => !h.origin && !s.views[h.id] && h.id !== s.progress.runId).map((h) => h.id)),
  );
  useEffect(() => {
    if (!seen) return;
    for (const id of unloaded)
      if (!asked.current.has(id)) {
        asked.current.add(id);
        loadRunRecords(id);
      }
  }, [seen, unloaded, loadRunRecords]);
  return (
    <section
      ref={panel}
      className="panel runs"
      aria-labelledby="runs-title"
      data-testid="runs-panel"
      data-count={runs.length}
    >
      <div className="charts-head">
        <h2 id="runs-title">Runs</h2>
        <label className="import">
          Import a run (an export, or a TRL trainer_state.json, verl or OpenRLHF metrics JSONL){' '}
          <input
            type="file"
            data-testid="import-file"
            accept=".csv,.jsonl,.json,.ndjson,text/csv,application/json"
            onChange={(e) => {
              const f = e.target.files?.[0];
              e.target.value = '';
              if (!f) return;
              f.text().then(
                (text) => importFile(f.name, text),
                (err: unknown) =>
                  addNotice('error', `Could not read ${f.name}: ${err instanceof Error ? err.message : String(err)}`),
              );
            }}
          />
        </label>
        {storage && (
          <span className="hint small" data-testid="storage">
            storage: {formatBytes(storage.usage)} of {formatBytes(storage.quota)} used
          </span>
        )}
      </div>
      {importError && (
        <p className="message error" role="alert" data-testid="import-error">
          {importError}
        </p>
      )}
      {lastImported && !importError && (
        <p className="hint" data-testid="import-ok">
          Imported "{lastImported.name}" ({lastImported.step} steps
          {lastImported.origin ? `, from ${TRAINER_TITLES[lastImported.origin.trainer]}` : ''}).
          {lastImported.origin && (
            <> Its metrics are under the lab's names; tick it to overlay it on the run you are viewing.</>
          )}
          {lastImported.origin && lastImported.origin.uncatalogued.length > 0 && (
            <span data-testid="import-uncatalogued">
              {' '}
              Not in the metric catalog, kept under their own names: {lastImported.origin.uncatalogued.join(', ')}.
            </span>
          )}
          {lastImported.origin?.summary && (
            <span data-testid="import-summary">
              {' '}
              End of run ({TRAINER_TITLES[lastImported.origin.trainer]}'s summary, not a step):{' '}
              {Object.entries(lastImported.origin.summary)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ')}
              .
            </span>
          )}
          {lastImported.origin?.nonFinite && (
            <span data-testid="import-non-finite">
              {' '}
              {lastImported.origin.nonFinite.count} value{lastImported.origin.nonFinite.count === 1 ? ' is' : 's are'}{' '}
              not finite, kept so: {lastImported.origin.nonFinite.notes.join('; ')}
              {lastImported.origin.nonFinite.count > lastImported.origin.nonFinite.notes.length ? '; ...' : ''}.
            </span>
          )}
        </p>
      )}
      {lastImported?.origin?.uncharted && !importError && (
        <UnchartedPicker runId={lastImported.id} uncharted={lastImported.origin.uncharted} />
      )}
      {runs.length === 0 ? (
        <p className="hint">
          No saved runs yet. Every run is saved in this browser as it trains and survives a reload.
        </p>
      ) : (
        <table className="results runs-table">
          <thead>
            <tr>
              <th title="overlay on the charts">overlay</th>
              <th>run</th>
              <th>status</th>
              <th className="num">step</th>
              <th
                className="num"
                title={`the reward as the charts draw it at the run's last point: smoothed with the charts' smoothing (${smoothing.toFixed(2)}), not the raw last step`}
                data-testid="runs-reward-head"
              >
                reward (smoothed)
              </th>
              <th>actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) =>
              row.kind === 'run' ? (
                <RunRow key={row.run.id} h={row.run} label={labels.get(row.run.id) ?? row.run.name} />
              ) : (
                <SeedGroupRows key={row.groupId} groupId={row.groupId} members={row.members} labels={labels} />
              ),
            )}
          </tbody>
        </table>
      )}
      <ConfigDiffTable />
    </section>
  );
}
