// The task a config describes, from task, prompts and answer_format together: validation names a malformed prompt
// list's line under the prompts field, task prompts needs a list, the think format's reward names are what
// reward_weights may name, and derived lengths follow the wrapped task.

import { describe, expect, it } from 'vitest';
import { checkConfig, derive, resolveConfig, taskOf } from './index';

const LIST = '{"prompt": "2+2=", "answer": "4"}\n{"prompt": "3+3=", "answer": "6"}';

describe('the task of a config', () => {
  it("trains task prompts on the list in the prompts field, and names a malformed list's line", () => {
    const c = resolveConfig('grpo', { task: 'prompts', prompts: LIST });
    expect(taskOf(c).verify({ prompt: '3+3=', answer: '' }, '6').reward).toBe(1);
    expect(derive(c).maxPromptTokens).toBe(5);
    const base = { ...resolveConfig('grpo'), task: 'prompts' };
    expect(checkConfig({ ...base, prompts: null }).errors).toEqual([
      'prompts: task "prompts" trains on your own prompt list, and none is given (the prompts field: JSONL or CSV text)',
    ]);
    expect(checkConfig({ ...base, prompts: `${LIST}\n{"prompt": "4+4="}` }).errors).toEqual([
      'prompts: line 3: missing "answer"',
    ]);
    expect(checkConfig({ ...resolveConfig('grpo'), prompts: LIST }).warnings).toContain(
      "prompts: ignored by task 'addition' (only task prompts trains on the list)",
    );
  });

  it('wraps the task in the think format, whose reward functions reward_weights may name', () => {
    const c = resolveConfig('grpo', {
      task: 'knights_knaves',
      answer_format: 'think',
      model: 'tiny',
      reward_weights: { accuracy: 1, format: 0.5, inner_format: 0.1 },
    });
    expect(
      taskOf(c).verify({ prompt: 'kk:A:Bn;B:A=B?', answer: '' }, '<think>B lies</think><answer>kn</answer>').parts,
    ).toMatchObject({ accuracy: 1, format: 1 });
    expect(derive(c).maxCompletionLength).toBe(4 + 32 + 16 + 1);
    expect(checkConfig({ ...c, reward_weights: { inner_format: 1 }, answer_format: 'plain' }).errors[0]).toMatch(
      /^reward_weights: knights_knaves has no reward function inner_format/,
    );
    // The tags do not fit the nano preset's 64 tokens with a long task: the length rule says so.
    expect(
      checkConfig({ ...c, model: 'nano', task: 'addition', difficulty: 10, reward_weights: null }).errors[0],
    ).toMatch(/^max_completion_length: BOS \+ the longest addition prompt/);
  });
});
