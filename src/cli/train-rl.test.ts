// The RL command: every config field is a flag in either form (--lr 1, --lr=1, dashes or underscores), and a
// misspelled or foreign flag names the nearest field or the field another trainer's name stands for; a run's
// rl_config.json reproduces its start; --resume refuses changes other than the ones it allows; and a real run
// interrupted with SIGINT leaves a consistent checkpoint + trainer state pair that --resume carries to the end.

import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { configFromUrlParamsKeeping, configToJson, derive, resolveConfig } from '../schema/config';
import { loadStartPolicy } from '../engine/start-policy';
import { decodeTrainerState, type TrainerState } from '../rl/algorithm/trainer-state';
import { EXIT, exitCodeOf } from './args';
import { PUBLIC_ASSETS, PUBLIC_DIR, TRAINER_STATE_FILE, loadCheckpointDir } from './files';
import { checkpointDirOf, parseRlArgs, resolveRunStart, resumeConfig, rlHelpText } from './train-rl';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const problem = (argv: string[]) => {
  try {
    parseRlArgs(argv);
    return '';
  } catch (e) {
    return (e as Error).message;
  }
};

describe('train flags', () => {
  it('reads fields in both forms, with dashes or underscores', () => {
    expect(parseRlArgs(['--num_generations', '4', '--learning-rate=0.01', '--dynamic_sampling']).fields).toEqual({
      num_generations: 4,
      learning_rate: 0.01,
      dynamic_sampling: true,
    });
  });

  it.each([
    [['--num_generation', '4'], 'unknown flag --num_generation; did you mean --num_generations?'],
    [['--num_generation=4'], 'unknown flag --num_generation; did you mean --num_generations?'],
    [['--kl_coef', '0.1'], "unknown flag --kl_coef; did you mean --beta? (kl_coef is another trainer's name for it)"],
    [['--lr', '1'], "unknown flag --lr; did you mean --learning_rate? (lr is another trainer's name for it)"],
    [['--lr=1'], "unknown flag --lr; did you mean --learning_rate? (lr is another trainer's name for it)"],
    [
      ['--clip_ratio_high', '0.28'],
      "unknown flag --clip_ratio_high; did you mean --epsilon_high? (clip_ratio_high is another trainer's name for it)",
    ],
    [
      ['--n_samples_per_prompt', '8'],
      "unknown flag --n_samples_per_prompt; did you mean --num_generations? (n_samples_per_prompt is another trainer's name for it)",
    ],
    [
      ['--ppo_epochs', '2'],
      "unknown flag --ppo_epochs; did you mean --num_iterations? (ppo_epochs is another trainer's name for it)",
    ],
    [['--presett', 'grpo'], 'unknown flag --presett; did you mean --preset?'],
  ])('%j', (argv, message) => {
    expect(problem(argv)).toBe(message);
  });

  it('reports every unknown flag and bad value at once, values of unknown flags not read as stray arguments', () => {
    const msg = problem(['--lr', '1', '--kl_coef', '0.1', '--temperature', 'hot']);
    expect(msg).toMatch(/--lr; did you mean --learning_rate/);
    expect(msg).toMatch(/--kl_coef; did you mean --beta/);
    expect(msg).toMatch(/temperature: must be a number/);
    expect(msg).not.toMatch(/unexpected argument/);
  });

  it('--reward_fn and --prompts name files whose text goes into the config, and a missing file is named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-lab-flags-'));
    writeFileSync(join(dir, 'reward.js'), '(prompt, completion) => completion.length\n');
    writeFileSync(join(dir, 'list.jsonl'), '{"prompt": "2+2=", "answer": "4"}\n');
    const { fields } = parseRlArgs([
      '--reward_fn',
      join(dir, 'reward.js'),
      `--prompts=${join(dir, 'list.jsonl')}`,
      '--task',
      'prompts',
    ]);
    expect(fields).toEqual({
      reward_fn: '(prompt, completion) => completion.length',
      prompts: '{"prompt": "2+2=", "answer": "4"}',
      task: 'prompts',
    });
    expect(
      resolveRunStart(parseRlArgs(['--reward_fn', join(dir, 'reward.js'), '--task', 'copy'])).config.reward_fn,
    ).toBe('(prompt, completion) => completion.length');
    expect(problem(['--reward_fn', join(dir, 'nope.js')])).toMatch(
      /^--reward_fn names a file whose text is the value: .*nope\.js: cannot read it/,
    );
  });

  it("--help lists every field with its range, default and other trainers' names", () => {
    const help = rlHelpText();
    expect(help).toMatch(
      /--epsilon_high .*\n.*num in \[0, 100\], or null \(epsilon\); default null\n.*elsewhere: TRL epsilon_high; verl actor_rollout_ref\.actor\.clip_ratio_high/,
    );
    expect(help).toMatch(/docs\/algorithms\.md/);
  });
});

const scratch = () => mkdtempSync(join(tmpdir(), 'rl-lab-train-'));

describe('exit codes', () => {
  const error = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e;
    }
    throw new Error('expected a throw');
  };

  it('a bad flag and a bad config value are both refused input (2); a runtime failure is 1', () => {
    expect(exitCodeOf(error(() => parseRlArgs(['--lr', '1'])))).toBe(EXIT.usage);
    expect(exitCodeOf(error(() => resolveRunStart(parseRlArgs(['--task', 'copy', '--epsilon', '2']))))).toBe(
      EXIT.usage,
    );
    expect(exitCodeOf(error(() => resolveRunStart(parseRlArgs(['--config', '/no/such/rl_config.json']))))).toBe(
      EXIT.usage,
    );
    expect(exitCodeOf(new Error('device lost'))).toBe(EXIT.failed);
    expect(new Set(Object.values(EXIT)).size).toBe(4);
  });
});

describe('the start of a run', () => {
  it("records the shipped warm start and its difficulty, so the run's rl_config.json fed back gives the same config and start", () => {
    const first = resolveRunStart(
      parseRlArgs(['--task', 'copy', '--preset', 'dr_grpo', '--steps', '3', '--seed', '5']),
    );
    expect(first.config.checkpoint).toBe('copy');
    expect(first.config.difficulty).toBe(3);
    expect(first.dir).toBe(fileURLToPath(new URL('checkpoints/copy', PUBLIC_DIR)));
    const file = join(scratch(), 'rl_config.json');
    writeFileSync(file, configToJson(first.config, first.preset));
    expect(resolveRunStart(parseRlArgs(['--config', file]))).toEqual(first);
  });

  it('`checkpoint null` is a fresh `model`, as the field says, from a flag, a config file and a link alike', async () => {
    // copy ships a warm start, which a run without a checkpoint field starts from.
    expect(resolveRunStart(parseRlArgs(['--task', 'copy'])).config.checkpoint).toBe('copy');
    const flag = resolveRunStart(parseRlArgs(['--task', 'copy', '--checkpoint', 'null']));
    expect(flag.config.checkpoint).toBe(null);
    expect(flag.dir).toBe(null);
    const file = join(scratch(), 'rl_config.json');
    writeFileSync(file, JSON.stringify({ task: 'copy', checkpoint: null }));
    expect(resolveRunStart(parseRlArgs(['--config', file])).dir).toBe(null);
    // The page reads a link into its draft, which the worker's start policy loads: a fresh model too.
    const link = configFromUrlParamsKeeping(new URLSearchParams('task=copy&checkpoint=null'));
    expect(link.problems).toEqual([]);
    expect(link.config.checkpoint).toBe(null);
    const start = await loadStartPolicy(link.config, PUBLIC_ASSETS);
    expect(start.source).toMatch(/^fresh nano model/);
  });

  it("records an --init directory (absolute) and a fresh model's difficulty the same way", () => {
    const init = resolveRunStart(
      parseRlArgs(['--task', 'copy', '--init', 'public/checkpoints/copy', '--difficulty', '2']),
    );
    expect(init.config.checkpoint).toBe(resolve('public/checkpoints/copy'));
    expect(init.dir).toBe(resolve('public/checkpoints/copy'));
    const file = join(scratch(), 'rl_config.json');
    writeFileSync(file, configToJson(init.config, init.preset));
    expect(resolveRunStart(parseRlArgs(['--config', file]))).toEqual(init);
    // multiplication ships no warm start: a fresh model, with the task's default difficulty recorded.
    const fresh = resolveRunStart(parseRlArgs(['--task', 'multiplication']));
    expect(fresh.dir).toBe(null);
    expect(fresh.config.checkpoint).toBe(null);
    expect(fresh.config.difficulty).toBe(derive({ ...fresh.config, difficulty: null }).difficulty);
    writeFileSync(file, configToJson(fresh.config, fresh.preset));
    expect(resolveRunStart(parseRlArgs(['--config', file]))).toEqual(fresh);
  });

  it('shows a missing absolute checkpoint directory as given, not under public/checkpoints/', () => {
    expect(checkpointDirOf('/no/such/dir')).toBe('/no/such/dir');
    expect(checkpointDirOf('runs/x')).toBe('runs/x');
    expect(checkpointDirOf('copy')).toBe(fileURLToPath(new URL('checkpoints/copy', PUBLIC_DIR)));
    expect(() => resolveRunStart(parseRlArgs(['--task', 'copy', '--init', 'a', '--checkpoint', 'copy']))).toThrow(
      /--init and --checkpoint both name the starting weights/,
    );
  });
});

describe('--resume', () => {
  /** What resumeConfig reads of a state: the saved config and the steps done. */
  const saved = (step: number) =>
    ({ meta: { config: resolveConfig('grpo', { task: 'copy', steps: 6, seed: 1 }), step } }) as TrainerState;
  const refusal = (argv: string[], step = 3) => {
    try {
      resumeConfig(parseRlArgs(['--resume', 's', ...argv]), saved(step), 's');
      return '';
    } catch (e) {
      return (e as Error).message;
    }
  };

  it('continues with the saved config; --steps extends it and --save_every may change', () => {
    const c = resumeConfig(
      parseRlArgs(['--resume', 's', '--steps', '10', '--save_every', '2', '--out', 'o', '--quiet']),
      saved(6),
      's',
    );
    expect(c).toEqual({ ...saved(6).meta.config, steps: 10, save_every: 2 });
    expect(resumeConfig(parseRlArgs(['--resume', 's', '--seed', '1', '--task', 'copy']), saved(3), 's')).toEqual(
      saved(3).meta.config,
    );
  });

  it.each([
    [
      ['--learning_rate', '0.1'],
      /these flags cannot change on resume: --learning_rate \(may change: --steps, --save_every, --out, --quiet, --backend, --autotune, --inspect-groups, --memory-budget, --overwrite, --hf_endpoint\)/,
    ],
    [['--preset', 'ppo', '--seed', '2', '--task', 'addition'], /cannot change on resume: --preset, --seed, --task /],
    [['--config', 'x.json'], /cannot change on resume: --config /],
    [['--init', 'dir'], /cannot change on resume: --init /],
    [['--steps', '2'], /--steps 2 is fewer than the 3 steps s has done already/],
  ])('refuses %j, naming the flags', (argv, message) => {
    expect(refusal(argv)).toMatch(message);
  });

  it('a finished run says so and how to extend it, instead of running 0 steps', () => {
    expect(refusal([], 6)).toBe(
      's: the run is finished (6 of 6 steps done); resume with --steps N (N > 6) to extend it',
    );
    expect(refusal(['--steps', '6'], 6)).toMatch(/the run is finished/);
  });
});

describe('interrupting a run', () => {
  const cli = (args: string[]) =>
    spawn(
      process.execPath,
      ['--import', 'tsx', '--import', './src/cli/register-raw.mjs', 'src/cli/train.ts', ...args],
      { cwd: ROOT, env: process.env },
    );
  const finished = (child: ChildProcess) =>
    new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const stepsIn = (path: string) =>
    existsSync(path)
      ? readFileSync(path, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { step: number }).step)
      : [];

  it('SIGINT saves the last completed step as a pair, and --resume continues to the end', async () => {
    const out = join(scratch(), 'run');
    const tiny = [
      '--task',
      'copy',
      '--steps',
      '40',
      '--train_batch_size',
      '1',
      '--num_generations',
      '2',
      '--eval_every',
      '0',
      '--save_every',
      '0',
      '--inspect-groups',
      '0',
      '--quiet',
      '--autotune=false',
    ];
    const child = cli([...tiny, '--out', out]);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exit = finished(child);
    // Interrupt once a few steps are logged (save_every 0: nothing is saved before the interrupt).
    await new Promise<void>((ready) => {
      const poll = setInterval(() => {
        if (stepsIn(join(out, 'metrics.jsonl')).length >= 3 || child.exitCode !== null) {
          clearInterval(poll);
          ready();
        }
      }, 100);
    });
    child.kill('SIGINT');
    expect(await exit, stderr).toBe(EXIT.interrupted);
    expect(stderr).toMatch(/interrupted by SIGINT after step (\d+) of 40 .*continue with: npm run train -- --resume/);
    const state = decodeTrainerState(new Uint8Array(readFileSync(join(out, TRAINER_STATE_FILE))));
    const { ck } = await loadCheckpointDir(out);
    const stopped = state.meta.step;
    expect(stopped).toBeGreaterThanOrEqual(3);
    expect(stopped).toBeLessThan(40);
    expect(ck.metadata?.steps).toBe(String(stopped));
    expect(stepsIn(join(out, 'metrics.jsonl'))).toEqual(Array.from({ length: stopped }, (_, i) => i + 1));

    // As a SIGKILL after a step's log but before its save would leave it: a line the state does not hold.
    appendFileSync(join(out, 'metrics.jsonl'), `${JSON.stringify({ step: stopped + 1, reward: 0 })}\n`);
    const resumed = cli(['--resume', join(out, TRAINER_STATE_FILE), '--quiet', '--autotune=false']);
    let resumedErr = '';
    resumed.stderr!.on('data', (d) => (resumedErr += d));
    expect(await finished(resumed), resumedErr).toBe(EXIT.ok);
    expect(resumedErr).toContain(`dropped 1 log line(s) after step ${stopped}`);
    expect(stepsIn(join(out, 'metrics.jsonl'))).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(decodeTrainerState(new Uint8Array(readFileSync(join(out, TRAINER_STATE_FILE)))).meta.step).toBe(40);
    expect((await loadCheckpointDir(out)).ck.metadata?.steps).toBe('40');
  }, 300_000);
});
