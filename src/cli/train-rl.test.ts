// The RL command's flags: every config field is a flag in either form (--lr 1, --lr=1, dashes or underscores),
// and a misspelled or foreign flag names the nearest field or the field another trainer's name stands for.

import { describe, expect, it } from 'vitest';
import { parseRlArgs, rlHelpText } from './train-rl';

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
    expect(parseRlArgs(['--num_generations', '4', '--learning-rate=0.01', '--dynamic_sampling']).fields).toEqual({ num_generations: 4, learning_rate: 0.01, dynamic_sampling: true });
  });

  it.each([
    [['--num_generation', '4'], 'unknown flag --num_generation; did you mean --num_generations?'],
    [['--num_generation=4'], 'unknown flag --num_generation; did you mean --num_generations?'],
    [['--kl_coef', '0.1'], "unknown flag --kl_coef; did you mean --beta? (kl_coef is another trainer's name for it)"],
    [['--lr', '1'], "unknown flag --lr; did you mean --learning_rate? (lr is another trainer's name for it)"],
    [['--lr=1'], "unknown flag --lr; did you mean --learning_rate? (lr is another trainer's name for it)"],
    [['--clip_ratio_high', '0.28'], "unknown flag --clip_ratio_high; did you mean --epsilon_high? (clip_ratio_high is another trainer's name for it)"],
    [['--n_samples_per_prompt', '8'], "unknown flag --n_samples_per_prompt; did you mean --num_generations? (n_samples_per_prompt is another trainer's name for it)"],
    [['--ppo_epochs', '2'], "unknown flag --ppo_epochs; did you mean --num_iterations? (ppo_epochs is another trainer's name for it)"],
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

  it('--help lists every field with its range, default and other trainers\' names', () => {
    const help = rlHelpText();
    expect(help).toMatch(/--epsilon_high .*\n.*num in \[0, 100\], or null \(epsilon\); default null\n.*elsewhere: TRL epsilon_high; verl actor_rollout_ref\.actor\.clip_ratio_high/);
    expect(help).toMatch(/docs\/algorithms\.md/);
  });
});
