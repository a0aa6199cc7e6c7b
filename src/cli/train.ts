// `npm run train -- --sft --task <task> ...`: supervised warm start on a task's demonstrations, on the GPU
// through Dawn. Prints a progress bar, writes metrics.jsonl, the checkpoint and eval.json into --out.
// Without --sft the command is reinforcement learning (train-rl.ts: --task <task> --preset <algorithm>).

import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODEL_PRESETS, parameterCount, type ModelPresetName } from '../schema/model-config';
import { GpuPolicy } from '../model/policy';
import { SFT_DEFAULTS, evaluateGreedy, trainSft } from '../rl/learners/sft';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { getTask, taskNames } from '../tasks';
import { UsageError, helpText, parseArgs, runCli, progressBar, type FlagSpec } from './args';
import { loadCharTokenizerFile, loadCheckpointDir, saveCheckpointDir } from './files';
import { trainRl } from './train-rl';
import { AUTOTUNE_FLAG, acquireTunedDevice } from './tuned-device';

const FLAGS: Record<string, FlagSpec> = {
  sft: { type: 'boolean', doc: "supervised fine-tuning on the task's demonstrations (the warm start for RL)" },
  task: { type: 'string', doc: `task: ${taskNames.join(', ')}` },
  difficulty: { type: 'number', doc: 'task difficulty (task default when omitted)', integer: true, min: 0 },
  model: {
    type: 'string',
    doc: `model preset to start from scratch: ${Object.keys(MODEL_PRESETS).join(', ')}`,
    default: 'nano',
  },
  init: { type: 'string', doc: 'checkpoint directory to start from instead of a fresh model' },
  steps: { type: 'number', doc: 'optimizer steps', integer: true, min: 1, max: 1_000_000, default: SFT_DEFAULTS.steps },
  batch: {
    type: 'number',
    doc: 'demonstrations per step',
    integer: true,
    min: 1,
    max: 4096,
    default: SFT_DEFAULTS.batchSize,
  },
  lr: {
    type: 'number',
    doc: 'peak learning rate (warmup then cosine decay)',
    min: 0,
    max: 1,
    default: SFT_DEFAULTS.lr,
  },
  warmup: { type: 'number', doc: 'warmup steps', integer: true, min: 0, default: SFT_DEFAULTS.warmup },
  'weight-decay': {
    type: 'number',
    doc: 'AdamW decoupled weight decay',
    min: 0,
    max: 1,
    default: SFT_DEFAULTS.weightDecay,
  },
  'max-grad-norm': { type: 'number', doc: 'clip the global gradient norm', min: 0, default: 1 },
  noise: { type: 'number', doc: 'fraction of demonstrations replaced by wrong ones', min: 0, max: 1, default: 0 },
  seed: { type: 'number', doc: 'seed of initialization, data and evaluation', integer: true, min: 0, default: 0 },
  eval: { type: 'number', doc: 'held-out items for the final greedy evaluation', integer: true, min: 0, default: 200 },
  'eval-every': {
    type: 'number',
    doc: 'validate (greedy, 100 held-out items) every this many steps (0: never)',
    integer: true,
    min: 0,
    default: 0,
  },
  'stop-at-accuracy': {
    type: 'number',
    doc: 'stop once validation accuracy reaches this (warm starts that leave RL room)',
    min: 0,
    max: 1,
  },
  out: { type: 'string', doc: 'output directory (metrics.jsonl, checkpoint, eval.json)' },
  autotune: AUTOTUNE_FLAG,
  help: { type: 'boolean', doc: 'show this help' },
};

async function main(argv: string[]): Promise<number> {
  if (!argv.some((a) => a === '--sft' || a.startsWith('--sft='))) return trainRl(argv);
  const args = parseArgs(argv, FLAGS);
  if (args.help) {
    process.stdout.write(helpText('usage: npm run train -- --sft --task <task> [flags]', FLAGS));
    return 0;
  }
  if (typeof args.task !== 'string') throw new UsageError(`--task is required (one of ${taskNames.join(', ')})`);
  const task = getTask(args.task, args.difficulty as number | undefined);
  const out = (args.out as string | undefined) ?? join('runs', `sft-${task.name}-${Date.now()}`);
  mkdirSync(out, { recursive: true });
  let { tok, json: tokenizerJson } = loadCharTokenizerFile();
  let tokenizerConfigJson: string | null = null;
  let config;
  let params;
  if (typeof args.init === 'string') {
    // A checkpoint keeps its own tokenizer (the character vocabulary, or a Hugging Face folder's BPE).
    const loaded = await loadCheckpointDir(args.init);
    config = loaded.ck.config;
    params = loaded.ck.params;
    ({ tok, tokenizerJson, tokenizerConfigJson } = loaded);
  } else {
    const name = args.model as string;
    if (!(name in MODEL_PRESETS))
      throw new UsageError(`--model must be one of ${Object.keys(MODEL_PRESETS).join(', ')}, got "${name}"`);
    config = MODEL_PRESETS[name as ModelPresetName];
    const init = initParams(config, new Rng(args.seed as number), { std: 0.02 });
    params = Object.fromEntries(Object.entries(init).map(([k, v]) => [k, Float32Array.from(v.data)]));
  }
  const ctx = await acquireTunedDevice({ tune: Boolean(args.autotune) });
  console.error(
    `task ${task.name} (difficulty ${task.difficulty}), model ${parameterCount(config).toLocaleString('en-US')} parameters, out ${out}`,
  );
  const policy = GpuPolicy.create(ctx, config, params, args.batch as number);
  const metricsPath = join(out, 'metrics.jsonl');
  writeFileSync(metricsPath, '');
  const opts = {
    steps: args.steps as number,
    batchSize: args.batch as number,
    lr: args.lr as number,
    warmup: args.warmup as number,
    weightDecay: args['weight-decay'] as number,
    maxGradNorm: args['max-grad-norm'] as number,
    noise: args.noise as number,
    seed: args.seed as number,
    logEvery: Math.max(1, Math.min(25, Math.floor((args.steps as number) / 20))),
  };
  const evalEvery = args['eval-every'] as number;
  const stopAt = args['stop-at-accuracy'] as number | undefined;
  if (evalEvery > 0) opts.logEvery = evalEvery;
  let stepsRun = 0;
  let validation: number | undefined;
  for await (const p of trainSft(policy, task, tok, opts)) {
    stepsRun = p.step;
    const record: Record<string, number> = {
      step: p.step,
      loss: p.loss,
      learning_rate: p.lr,
      'timing_s/elapsed': p.elapsedMs / 1000,
    };
    if (evalEvery > 0) {
      // Validation draws held-out items with its own seed, so the final evaluation (another seed) stays unbiased.
      validation = (await evaluateGreedy(policy, task, tok, { n: 100, seed: 999, split: 'heldout' })).accuracy;
      record['eval/validation_accuracy'] = validation;
    }
    appendFileSync(metricsPath, `${JSON.stringify(record)}\n`);
    const eta = ((p.elapsedMs / p.step) * (p.steps - p.step)) / 1000;
    const acc = validation === undefined ? '' : ` val ${(validation * 100).toFixed(0)}%`;
    process.stderr.write(
      `\r${progressBar(p.step / p.steps, `step ${p.step}/${p.steps} loss ${p.loss.toFixed(4)}${acc} lr ${p.lr.toExponential(2)} eta ${eta.toFixed(0)}s`)}   `,
    );
    if (stopAt !== undefined && validation !== undefined && validation >= stopAt) break;
  }
  process.stderr.write('\n');
  const special = { bosId: tok.bosId, eosId: tok.eosId, padId: tok.padId };
  const metadata = {
    made_by: `npm run train -- ${argv.join(' ')}`,
    task: task.name,
    difficulty: String(task.difficulty),
    steps: String(stepsRun),
    seed: String(opts.seed),
  };
  saveCheckpointDir(
    out,
    { config, params: await policy.download(), metadata, special },
    tokenizerJson,
    tokenizerConfigJson,
  );
  if ((args.eval as number) > 0) {
    const ev = await evaluateGreedy(policy, task, tok, { n: args.eval as number, seed: 12345, split: 'heldout' });
    writeFileSync(join(out, 'eval.json'), `${JSON.stringify({ split: 'heldout', steps: stepsRun, ...ev }, null, 2)}\n`);
    console.error(
      `held-out greedy accuracy ${(ev.accuracy * 100).toFixed(1)}% (n=${ev.n}), mean reward ${ev.meanReward.toFixed(3)}`,
    );
    for (const s of ev.samples.slice(0, 4))
      console.error(`  ${JSON.stringify(s.prompt)} -> ${JSON.stringify(s.completion)} (${s.reason})`);
  }
  console.log(out);
  policy.destroy();
  ctx.destroy();
  return 0;
}

runCli('train', main);
