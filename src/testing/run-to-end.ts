// A trainer run from its options to its last step, every record returned: the trainer's own tests and scripts. The
// product makes trainers only through a RunSession (src/engine/run-session.ts).

import { Trainer, type TrainerOptions } from '../rl/algorithm/trainer';
import type { StepRecord } from '../schema/stream';

/** Runs a trainer from `opts` to its last step and returns every record. */
export async function runToEnd(opts: TrainerOptions): Promise<StepRecord[]> {
  const t = await Trainer.create(opts);
  const out: StepRecord[] = [];
  try {
    for await (const r of t.run()) out.push(r);
  } finally {
    t.destroy();
  }
  return out;
}
