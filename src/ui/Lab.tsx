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
import { RunControls } from './RunControls';
import { RunElsewherePanel } from './RunElsewherePanel';
import { RunsPanel } from './RunsPanel';
import { WeightUpdates } from './WeightUpdates';

export function Lab() {
  return (
    <div className="lab">
      <PageHeader />
      <Notices />
      <div className="lab-grid">
        <aside className="lab-side">
          <AdapterPanel compact />
          <PanelBoundary name="lessons">
            <LessonsPanel />
          </PanelBoundary>
          <PanelBoundary name="configure">
            <ConfigPanel />
          </PanelBoundary>
        </aside>
        <main className="lab-main">
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
