// What the benchmark page (?bench) needs from below the store: its own worker's client and the report's rows,
// and the model presets it offers. Imported by the bench panel only, so all of it stays in the page's lazily
// loaded bench chunk and off the lab's startup path. Re-exports, and the list of presets.

import { MODEL_PRESETS, type ModelPresetName } from '../schema/model-config';

export { BenchClient, type BenchResponse } from '../worker/bench-client';
export { rowsOf, type BenchReport, type BenchRow, type BenchSection } from '../schema/bench-report';
export type { ModelPresetName } from '../schema/model-config';

/** The model presets the benchmark can run, in the catalog's order. */
export const BENCH_PRESETS = Object.keys(MODEL_PRESETS) as ModelPresetName[];
