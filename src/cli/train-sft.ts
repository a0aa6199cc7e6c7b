// `npm run train -- --sft --task <task> ...`: supervised warm start on a task's demonstrations, on the GPU through
// Dawn, as a run session in mode 'sft' (src/engine/supervised-trainer.ts) stepped to its end: greedy validation
// every --eval-every steps, stopping early at --stop-at-accuracy. Prints a progress bar, writes metrics.jsonl, the
// checkpoint and eval.json into --out. The command that makes the shipped warm starts (scripts/make-warm-starts.sh).

import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { GpuContext } from '../gpu';
import { MODEL_PRESETS, parameterCount } from '../schema/model-config';
import { resolveConfig } from '../schema/config';
import { SFT_DEFAULTS, evaluateGreedy } from '../rl/learners/sft';
import { NO_SINK, RunSession } from '../engine/run-session';
import type { SupervisedOptions } from '../engine/supervised-trainer';
import { getTask, taskNames } from '../tasks';
import { UsageError, helpText, parseArgs, progressBar, type FlagSpec } from './args';
import { CLI_ASSETS, saveCheckpointDir } from './files';
import { AUTOTUNE_FLAG, acquireTunedDevice } from './tuned-device';

/** Held-out items of each validation, and their seed (not the final evaluation's, so that one stays unbiased). */
const VALIDATION = { n: 100, seed: 999 };
/** The seed of the final evaluation's held-out items. */
const FINAL_EVAL_SEED = 12345;

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

/** Whether `argv` asks `npm run train` for the supervised warm start (--sft) rather than RL. */
export function isSftCommand(argv: readonly string[]): boolean {
  return argv.some((a) => a === '--sft' || a.startsWith('--sft='));
}

/** The supervised warm start: `argv` holds --sft and the flags above. */
export async function trainSftCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  if (args.help) {
    process.stdout.write(helpText('usage: npm run train -- --sft --task <task> [flags]', FLAGS));
    return 0;
  }
  if (typeof args.task !== 'string') throw new UsageError(`--task is required (one of ${taskNames.join(', ')})`);
  const task = getTask(args.task, args.difficulty as number | undefined);
  const out = (args.out as string | undefined) ?? join('runs', `sft-${task.name}-${Date.now()}`);
  mkdirSync(out, { recursive: true });
  const init = typeof args.init === 'string' ? args.init : null;
  const model = args.model as string;
  if (init === null && !(model in MODEL_PRESETS))
    throw new UsageError(`--model must be one of ${Object.keys(MODEL_PRESETS).join(', ')}, got "${model}"`);
  const steps = args.steps as number;
  const batch = args.batch as number;
  const seed = args.seed as number;
  const evalEvery = args['eval-every'] as number;
  const stopAt = args['stop-at-accuracy'] as number | undefined;
  // The run's start and its policy: a checkpoint directory (with its own tokenizer) or a fresh preset from the seed,
  // stored in f32 (a policy trained in full) without LoRA. No held-out evaluation on the RL schedule: validation is
  // the supervised options' own.
  const config = resolveConfig('grpo', {
    task: task.name,
    difficulty: (args.difficulty as number | undefined) ?? null,
    ...(init === null
      ? { model: model as keyof typeof MODEL_PRESETS, checkpoint: null }
      : { checkpoint: resolve(init) }),
    seed,
    steps,
    eval_every: 0,
    save_every: 0,
    lora_rank: 0,
    weight_dtype: 'f32',
  });
  const supervised: SupervisedOptions = {
    steps,
    batchSize: batch,
    lr: args.lr as number,
    warmup: args.warmup as number,
    weightDecay: args['weight-decay'] as number,
    maxGradNorm: args['max-grad-norm'] as number,
    noise: args.noise as number,
    seed,
    // The loss is read back (and the run validated) every --eval-every steps, else about 20 times a run.
    logEvery: evalEvery > 0 ? evalEvery : Math.max(1, Math.min(25, Math.floor(steps / 20))),
    rows: batch,
    ...(evalEvery > 0 && { validation: VALIDATION, ...(stopAt !== undefined && { stopAtAccuracy: stopAt }) }),
  };
  let ctx: GpuContext | undefined;
  const session = await RunSession.open(
    {
      config,
      backend: 'webgpu',
      divergence: 'stop',
      mode: 'sft',
      supervised,
      onStart: ({ modelConfig }) =>
        console.error(
          `task ${task.name} (difficulty ${task.difficulty}), model ${parameterCount(modelConfig).toLocaleString('en-US')} parameters, out ${out}`,
        ),
    },
    {
      assets: CLI_ASSETS,
      sink: NO_SINK,
      device: async () => (ctx ??= await acquireTunedDevice({ tune: Boolean(args.autotune) })),
    },
  );
  const metricsPath = join(out, 'metrics.jsonl');
  writeFileSync(metricsPath, '');
  const t0 = performance.now();
  await session.trainToEnd({
    onStep: ({ records }) => {
      for (const r of records) {
        const m = r.metrics as Record<string, number>;
        // Seconds since training began, the step's validation included.
        const elapsed = (performance.now() - t0) / 1000;
        const validation = m['eval/validation_accuracy'];
        const line: Record<string, number> = {
          step: r.step,
          loss: m.loss,
          learning_rate: m.learning_rate,
          'timing_s/elapsed': elapsed,
          ...(validation !== undefined && { 'eval/validation_accuracy': validation }),
        };
        appendFileSync(metricsPath, `${JSON.stringify(line)}\n`);
        const eta = ((elapsed / r.step) * (steps - r.step)).toFixed(0);
        const acc = validation === undefined ? '' : ` val ${(validation * 100).toFixed(0)}%`;
        process.stderr.write(
          `\r${progressBar(r.step / steps, `step ${r.step}/${steps} loss ${m.loss.toFixed(4)}${acc} lr ${m.learning_rate.toExponential(2)} eta ${eta}s`)}   `,
        );
      }
    },
  });
  process.stderr.write('\n');
  const stepsRun = session.step;
  const { policy, tokenizer: tok } = session.setting;
  const special = { bosId: tok.bosId, eosId: tok.eosId, padId: tok.padId };
  const metadata = {
    made_by: `npm run train -- ${argv.join(' ')}`,
    task: task.name,
    difficulty: String(task.difficulty),
    steps: String(stepsRun),
    seed: String(seed),
  };
  saveCheckpointDir(
    out,
    { config: policy.config, params: await policy.download(), metadata, special },
    session.tokenizerJson,
    session.tokenizerConfigJson,
  );
  if ((args.eval as number) > 0) {
    const ev = await evaluateGreedy(policy, task, tok, {
      n: args.eval as number,
      seed: FINAL_EVAL_SEED,
      split: 'heldout',
    });
    writeFileSync(join(out, 'eval.json'), `${JSON.stringify({ split: 'heldout', steps: stepsRun, ...ev }, null, 2)}\n`);
    console.error(
      `held-out greedy accuracy ${(ev.accuracy * 100).toFixed(1)}% (n=${ev.n}), mean reward ${ev.meanReward.toFixed(3)}`,
    );
    for (const s of ev.samples.slice(0, 4))
      console.error(`  ${JSON.stringify(s.prompt)} -> ${JSON.stringify(s.completion)} (${s.reason})`);
  }
  console.log(out);
  session.destroy();
  ctx?.destroy();
  return 0;
}
