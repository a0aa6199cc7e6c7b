// The interop tier's last step: a trainer_state.json that TRL wrote, imported into the lab as the Runs page imports
// a trainer log (io/foreign-logs.ts parseRunOrTrainerLog). Prints the run's trainer, rows and the lab metrics it
// charts, and the end-of-run summary it keeps; exits 1 when the file is not read as TRL's, carries no metric row or
// no summary.
//   npx tsx scripts/interop/import-trainer-state.ts out/trainer_state.json

import { readFileSync } from 'node:fs';
import { parseRunOrTrainerLog } from '../../src/io/foreign-logs';

const file = process.argv[2];
if (!file) throw new Error('usage: import-trainer-state.ts TRAINER_STATE_JSON');
const run = parseRunOrTrainerLog(file, readFileSync(file, 'utf8'));
const origin = run.header.origin;
const names = [...new Set(run.rows.flatMap((r) => Object.keys(r.metrics)))].sort();
const shown = names.length > 10 ? `${names.slice(0, 10).join(', ')}, ...` : names.join(', ');
const summary = Object.entries(origin?.summary ?? {})
  .map(([k, v]) => `${k} ${v}`)
  .join(', ');
console.log(
  `  imported into the lab: ${origin?.trainer ?? 'not a trainer log'}, ${run.rows.length} row(s) at step(s) ${run.rows.map((r) => r.step).join(', ')}, ${names.length} metrics (${shown})${origin?.uncatalogued.length ? `; ${origin.uncatalogued.length} under TRL's own names` : ''}; end-of-run summary: ${summary || 'none'}`,
);
// TRL's Trainer always ends log_history with its summary (train_runtime, ...): the import keeps it as the run's.
if (origin?.trainer !== 'trl' || run.rows.length === 0 || names.length === 0 || !summary) process.exit(1);
