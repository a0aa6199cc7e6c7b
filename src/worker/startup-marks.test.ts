// The time-to-first-step marks are set once per stage, at the first time it is reached, under the shared prefix
// the e2e (e2e/first-step.spec.ts) reads them by.
import { beforeEach, expect, it, vi } from 'vitest';
import { STARTUP_MARK_PREFIX } from './startup-marks';

// The fast tier's files share their worker (Vitest's isolate off): a store test before this one may have reached
// stages already, in the module's once-per-page set and on the same `performance`. Each test takes a fresh module
// and no earlier marks.
beforeEach(() => {
  vi.resetModules();
  for (const m of performance.getEntriesByType('mark'))
    if (m.name.startsWith(STARTUP_MARK_PREFIX)) performance.clearMarks(m.name);
});
const freshMarks = () => import('./startup-marks');

it('marks a stage once, at its first occurrence', async () => {
  const { markStartup } = await freshMarks();
  const named = () => performance.getEntriesByName(`${STARTUP_MARK_PREFIX}first-point`, 'mark');
  expect(named()).toHaveLength(0);
  markStartup('first-point');
  const first = named()[0].startTime;
  markStartup('first-point');
  expect(named()).toHaveLength(1);
  expect(named()[0].startTime).toBe(first);
  markStartup('step-1');
  expect(performance.getEntriesByName(`${STARTUP_MARK_PREFIX}step-1`, 'mark')).toHaveLength(1);
});

it('says whether a stage was reached (the charts end time to first step only after the first metrics)', async () => {
  const { markStartup, startupMarked } = await freshMarks();
  expect(startupMarked('first-metrics')).toBe(false);
  markStartup('first-metrics');
  expect(startupMarked('first-metrics')).toBe(true);
});
