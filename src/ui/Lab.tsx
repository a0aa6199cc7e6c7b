// The lab page: follow a lesson, or configure an experiment, run it, watch every metric, inspect sampled groups
// token by token, and keep, compare, share and export runs. Layout only; each panel reads the store itself.
import { AdapterPanel } from './AdapterPanel';
import { Charts } from './Charts';
import { CompareObjectives } from './CompareObjectives';
import { ConfigPanel } from './ConfigPanel';
import { Downloads } from './Downloads';
import { PanelBoundary } from './ErrorBoundary';
import { Inspector } from './Inspector';
import { LessonsPanel } from './LessonsPanel';
import { Notices } from './Notices';
import { PageHeader } from './PageHeader';
import { RealModelExperiment } from './RealModelExperiment';
import { RunControls } from './RunControls';
import { RunElsewherePanel } from './RunElsewherePanel';
import { RunsPanel } from './RunsPanel';
import { WeightUpdates } from './WeightUpdates';

/** The run controls' heading (RunControls), where the skip link lands. */
const RUN_CONTROLS_HEADING = 'controls-title';

/**
 * The skip link: the first stop of Tab, straight to the run controls past the side panel's fields. Following it
 * focuses the first control that can be pressed (Start, usually); with none enabled the link's own jump to the
 * controls' heading leaves the next Tab there.
 */
function SkipToRunControls() {
  const skip = (e: React.MouseEvent) => {
    const controls = document.getElementById(RUN_CONTROLS_HEADING)?.closest('section');
    const first = controls?.querySelector<HTMLElement>('button:not(:disabled), a[href], input:not(:disabled)');
    if (!first) return;
    e.preventDefault();
    first.focus();
    first.scrollIntoView({ block: 'nearest' });
  };
  return (
    <a className="skip-link" href={`#${RUN_CONTROLS_HEADING}`} data-testid="skip-to-run" onClick={skip}>
      Skip to the run controls
    </a>
  );
}

/** The page's sections the jump list links to: each panel's heading id and the word the link shows. */
const SECTIONS: readonly { heading: string; label: string }[] = [
  { heading: 'charts-title', label: 'charts' },
  { heading: 'weights-title', label: 'weights' },
  { heading: 'inspector-title', label: 'inspector' },
  { heading: 'compare-title', label: 'compare' },
  { heading: 'runs-title', label: 'runs' },
];

/**
 * The jump list at the top of the main column: one link per section of a long page (the runs table sits thousands
 * of pixels down once a run has charts), each scrolling its section's heading to the top. A section not on the page
 * (a panel that failed and shows its error instead) is skipped by the browser: the link does nothing.
 */
function JumpList() {
  return (
    <nav className="jump-list" aria-label="Sections of the page" data-testid="jump-list">
      <span className="muted">Jump to:</span>{' '}
      {SECTIONS.map((s, i) => (
        <span key={s.heading}>
          {i > 0 && ' · '}
          <a href={`#${s.heading}`} data-testid={`jump-${s.label}`}>
            {s.label}
          </a>
        </span>
      ))}
    </nav>
  );
}

export function Lab() {
  return (
    <div className="lab">
      <SkipToRunControls />
      <PageHeader />
      <Notices />
      <div className="lab-grid">
        <aside className="lab-side">
          <AdapterPanel compact />
          <PanelBoundary name="lessons">
            <LessonsPanel />
          </PanelBoundary>
          <PanelBoundary name="real model">
            <RealModelExperiment />
          </PanelBoundary>
          <PanelBoundary name="configure">
            <ConfigPanel />
          </PanelBoundary>
        </aside>
        <main className="lab-main">
          <JumpList />
          <RunControls />
          <PanelBoundary name="charts">
            <Charts />
          </PanelBoundary>
          <PanelBoundary name="weights">
            <WeightUpdates />
          </PanelBoundary>
          <PanelBoundary name="inspector">
            <Inspector />
          </PanelBoundary>
          <PanelBoundary name="compare objectives">
            <CompareObjectives />
          </PanelBoundary>
          <PanelBoundary name="runs">
            <RunsPanel />
          </PanelBoundary>
          <RunElsewherePanel />
          <Downloads />
        </main>
      </div>
    </div>
  );
}
