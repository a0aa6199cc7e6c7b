// `npm run reward-model -- --task <task> [RL config flags] [--rm-* flags] --out <dir>`: trains a reward model in the
// lab on preference pairs of the starting policy's own completions, labelled by the task's verifier, and saves it
// as a folder a run's `reward_model` can name (config.json with "rl_lab", model.safetensors, tokenizer.json).
// Sampling follows the RL config flags (task, checkpoint or --init, temperature, num_generations, train_batch_size,
// seed), read by the same parser as `npm run train`. Not the RL run that then optimizes it.

import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { parameterCount } from '../schema/model-config';
import {
  REWARD_MODEL_TRAINING_DEFAULTS,
  rewardModelFiles,
  trainLabRewardModel,
  type RewardModelTrainingOptions,
} from '../rl/rewards/reward-model-train';
import { NO_SINK, RunSession } from '../engine/run-session';
import { EXIT, UsageError, helpText, parseArgs, progressBar, runCli, type FlagSpec } from './args';
import { CLI_ASSETS, mkdirOrFail, writeFileAtomic, writeFilesAtomic } from './files';
import { parseRlArgs, resolveRunStart } from './train-rl';
import { acquireTunedDevice } from './tuned-device';

const D = REWARD_MODEL_TRAINING_DEFAULTS;

/** The reward model's own flags; every other flag is an RL config flag of the sampling policy. */
const RM_FLAGS: Record<string, FlagSpec & { key?: keyof RewardModelTrainingOptions }> = {
  'rm-pairs': {
    type: 'number',
    doc: 'preference pairs to train on',
    integer: true,
    min: 1,
    max: 100_000,
    default: D.pairs,
    key: 'pairs',
  },
  'rm-held-out': {
    type: 'number',
    doc: 'preference pairs held out to measure ranking accuracy',
    integer: true,
    min: 0,
    max: 100_000,
    default: D.heldOutPairs,
    key: 'heldOutPairs',
  },
  'rm-steps': {
    type: 'number',
    doc: 'optimizer steps',
    integer: true,
    min: 1,
    max: 1_000_000,
    default: D.steps,
    key: 'steps',
  },
  'rm-batch': {
    type: 'number',
    doc: 'pairs per optimizer step',
    integer: true,
    min: 1,
    max: 512,
    default: D.batchPairs,
    key: 'batchPairs',
  },
  'rm-lr': { type: 'number', doc: 'AdamW learning rate', min: 0, max: 1, default: D.learningRate, key: 'learningRate' },
  'rm-center-coef': {
    type: 'number',
    doc: "lambda of the centering term lambda (r_c + r_r)^2 (TRL's center_rewards_coefficient)",
    min: 0,
    max: 10,
    default: D.centerCoef,
    key: 'centerCoef',
  },
  'rm-pairs-per-group': {
    type: 'number',
    doc: 'most pairs taken from one group of completions',
    integer: true,
    min: 1,
    max: 10_000,
    default: D.pairsPerGroup,
    key: 'pairsPerGroup',
  },
  'rm-max-batches': {
    type: 'number',
    doc: 'rollout batches sampled at most while collecting pairs',
    integer: true,
    min: 1,
    max: 10_000,
    default: D.maxBatches,
    key: 'maxBatches',
  },
  out: { type: 'string', doc: 'output directory (default runs/reward-model-<task>-<time>)' },
  help: { type: 'boolean', doc: 'show this help' },
};

/** Splits argv into the reward model's flags and the RL config flags. */
function splitArgs(argv: readonly string[]): { own: string[]; rl: string[] } {
  const own: string[] = [];
  const rl: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].startsWith('--') ? argv[i].slice(2).split('=')[0] : '';
    const spec = RM_FLAGS[name];
    if (!spec || !Object.hasOwn(RM_FLAGS, name)) {
      rl.push(argv[i]);
      continue;
    }
    own.push(argv[i]);
    if (spec.type !== 'boolean' && !argv[i].includes('=') && i + 1 < argv.length) own.push(argv[++i]);
  }
  return { own, rl };
}

async function main(argv: string[]): Promise<number> {
  const { own, rl } = splitArgs(argv);
  const args = parseArgs(own, RM_FLAGS);
  if (args.help) {
    process.stdout.write(helpText('usage: npm run reward-model -- --task <task> [RL config flags] [flags]', RM_FLAGS));
    process.stdout.write(
      '\nEvery other flag is an RL config flag of the sampling policy (task, checkpoint, temperature, num_generations, train_batch_size, seed, ...), as `npm run train -- --help` lists them.\n',
    );
    return EXIT.ok;
  }
  const parsed = parseRlArgs(rl);
  if (parsed.fields.task === undefined) throw new UsageError('--task is required (see --help)');
  const start = resolveRunStart(parsed);
  const config = start.config;
  if (!start.dir)
    throw new UsageError(
      `no warm start for ${config.task}: give --init or --checkpoint (a fresh model's completions are all wrong, so there is nothing to prefer)`,
    );
  const opts = Object.fromEntries(
    Object.entries(RM_FLAGS)
      .filter(([, s]) => s.key)
      .map(([name, s]) => [s.key!, args[name]]),
  ) as unknown as RewardModelTrainingOptions;
  const out = (args.out as string | undefined) ?? join('runs', `reward-model-${config.task}-${Date.now()}`);
  mkdirOrFail(out);

  const ctx = await acquireTunedDevice({ tune: false });
  // The sampling policy is a run's, opened as every run is; the reward model starts from its weights.
  const session = await RunSession.open(
    { config, backend: 'webgpu', divergence: 'stop' },
    { assets: CLI_ASSETS, sink: NO_SINK, device: async () => ctx },
  );
  const setting = session.setting;
  const tok = setting.tokenizer;
  const ck = await session.trainer.exportCheckpoint();
  console.error(
    `reward model for ${config.task} (difficulty ${setting.derived.difficulty}) from ${start.dir}, ${parameterCount(ck.config).toLocaleString('en-US')} parameters; ` +
      `pairs sampled at temperature ${config.temperature}, ${config.num_generations} per prompt`,
  );
  const metricsPath = join(out, 'metrics.jsonl');
  writeFileAtomic(metricsPath, '');
  const result = await trainLabRewardModel(
    setting,
    setting.policy,
    { ctx, config: ck.config, params: ck.params },
    opts,
    (step, m) => {
      appendFileSync(
        metricsPath,
        `${JSON.stringify({ step, bt_loss: m.loss, bt_accuracy: m.accuracy, bt_margin: m.margin, grad_norm: m.gradNorm })}\n`,
      );
      process.stderr.write(
        `\r${progressBar(step / opts.steps, `step ${step}/${opts.steps} loss ${m.loss.toFixed(4)} acc ${(m.accuracy * 100).toFixed(0)}%`)}   `,
      );
    },
  );
  process.stderr.write('\n');
  const c = result.collected;
  const summary =
    `${c.pairs.length} pairs from ${c.batches} batches (${c.mixedGroups} of ${c.groups} groups mixed); trained on ${result.trainPairs}, ` +
    `held out ${result.heldOutPairs}: ranked right ${(result.heldOutAccuracyBefore * 100).toFixed(1)}% before, ${(result.heldOutAccuracyAfter * 100).toFixed(1)}% after`;
  console.error(summary);
  const files = await rewardModelFiles(
    result,
    { bosId: tok.bosId, eosId: tok.eosId, padId: tok.padId },
    {
      made_by: `npm run reward-model -- ${argv.join(' ')}`,
      task: config.task,
      difficulty: setting.derived.difficulty,
      policy: config.checkpoint,
      held_out_accuracy_before: result.heldOutAccuracyBefore,
    },
  );
  writeFilesAtomic([
    [join(out, 'model.safetensors'), files.safetensors],
    [join(out, 'config.json'), files.configJson],
    [join(out, 'tokenizer.json'), session.tokenizerJson],
    ...(session.tokenizerConfigJson === null
      ? []
      : [[join(out, 'tokenizer_config.json'), session.tokenizerConfigJson] as [string, string]]),
  ]);
  console.error(`saved ${out} (reward_model: ${out})`);
  session.destroy();
  result.rm.destroy();
  ctx.destroy();
  return EXIT.ok;
}

runCli('reward-model', main);
