// Writes public/checkpoints/manifest.json from each checkpoint directory's eval.json and safetensors metadata.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2] ?? 'public/checkpoints';
const entries = [];
for (const task of readdirSync(root).sort()) {
  const dir = join(root, task);
  if (!statSync(dir).isDirectory()) continue;
  const evalJson = JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8'));
  const bytes = readFileSync(join(dir, 'model.safetensors'));
  const headerLen = Number(bytes.readBigUInt64LE(0));
  const meta = JSON.parse(bytes.subarray(8, 8 + headerLen).toString('utf8')).__metadata__ ?? {};
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  entries.push({
    task,
    difficulty: Number(meta.difficulty),
    path: `checkpoints/${task}`,
    command: meta.made_by,
    seed: Number(meta.seed),
    steps: Number(meta.steps),
    model: {
      hidden_size: config.hidden_size,
      num_hidden_layers: config.num_hidden_layers,
      vocab_size: config.vocab_size,
    },
    heldout_greedy_accuracy: evalJson.accuracy,
    heldout_mean_reward: evalJson.meanReward,
    eval_items: evalJson.n,
    bytes: bytes.length,
  });
}
writeFileSync(
  join(root, 'manifest.json'),
  `${JSON.stringify({ note: 'made by scripts/make-warm-starts.sh', checkpoints: entries }, null, 2)}\n`,
);
for (const e of entries)
  console.log(
    `${e.task.padEnd(10)} steps ${String(e.steps).padStart(4)}  held-out greedy accuracy ${(e.heldout_greedy_accuracy * 100).toFixed(1)}%`,
  );
