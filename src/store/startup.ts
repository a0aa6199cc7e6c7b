// The page's side of the time-to-first-step marks (src/worker/startup-marks.ts), for the UI, which imports values
// only from the store: the charts mark when their first point after the engine's first metrics is drawn.
export { markStartup, startupMarked } from '../worker/startup-marks';
