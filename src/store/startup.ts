// The page's side of the time-to-first-step marks (src/worker/startup-marks.ts), for the UI, which imports values
// only from the store: the charts mark when their first point is drawn.
export { markStartup } from '../worker/startup-marks';
