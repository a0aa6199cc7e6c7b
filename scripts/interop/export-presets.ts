// The interop tier's OpenRLHF and verl exports of every preset, in one process (npm run export's own code, runExport):
//   npx tsx --import ./src/cli/register-raw.mjs scripts/interop/export-presets.ts OUT_DIR CHECKPOINT
// writes OUT_DIR/openrlhf-<preset>/ and OUT_DIR/verl-<preset>/ for the countdown task, verl's with CHECKPOINT's
// tokenizer (its data.max_prompt_length counted in that model's tokens), and OUT_DIR/openrlhf-grpo-switches-on/ (chat
// template and gradient checkpointing on); prints the presets, space-separated. A preset a trainer has no estimator
// for leaves only DIR/REFUSED, the export's message.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runExport } from '../../src/cli/export';
import { PRESET_NAMES } from '../../src/schema/config';

const [out, checkpoint] = process.argv.slice(2);
if (!out || !checkpoint) throw new Error('usage: export-presets.ts OUT_DIR CHECKPOINT');
const quiet = () => {};
/**
 * One export; a preset whose advantage estimator the trainer does not compute is refused (render.ts,
 * estimatorRefusal), and the refusal is written to DIR/REFUSED for run.sh to print instead of parsing a command.
 */
async function exportOrRefusal(args: string[], dir: string): Promise<void> {
  try {
    await runExport([...args, '--out', dir], quiet);
  } catch (e) {
    if (!(e as Error).message.startsWith('adv_estimator: ')) throw e;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'REFUSED'), `${(e as Error).message}\n`);
  }
}

for (const preset of PRESET_NAMES) {
  const common = ['--preset', preset, '--task', 'countdown'];
  await exportOrRefusal(['--to', 'openrlhf', ...common], join(out, `openrlhf-${preset}`));
  await exportOrRefusal(['--to', 'verl', ...common, '--checkpoint', checkpoint], join(out, `verl-${preset}`));
}
// The switches on: OpenRLHF's store_true flags given bare.
await runExport(
  [
    ...['--to', 'openrlhf', '--preset', 'grpo', '--task', 'countdown', '--checkpoint', checkpoint],
    ...['--chat_template', 'true', '--gradient_checkpointing', 'true', '--out', join(out, 'openrlhf-grpo-switches-on')],
  ],
  quiet,
);
console.log(PRESET_NAMES.join(' '));
