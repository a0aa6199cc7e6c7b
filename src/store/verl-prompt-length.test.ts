// The "Run elsewhere" panel asks the worker for the verl export's data.max_prompt_length in the model's tokens (the
// tokenizer is the engine's): once per config, again after a failure, and an answer for a config no longer asked
// about is dropped.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../schema/config';
import { createLabStore } from './index';
import { fakeEngine, settle } from './fake-engine.fixture';

function lab() {
  const engine = fakeEngine();
  const store = createLabStore({ connect: engine.connect, storage: null });
  store.getState().startEngine();
  return { s: () => store.getState(), ...engine };
}

const counted = {
  value: 77,
  note: "the longest prompt in the model's tokens, its chat template applied as verl applies it",
};
const asks = (sent: { type: string }[]) => sent.filter((r) => r.type === 'verl-prompt-length').length;

describe("the verl export's prompt length, counted by the worker", () => {
  it('asks once per config, keeps the answer, and drops one for a config no longer shown', async () => {
    const { s, sent, reply } = lab();
    const tiny = resolveConfig('grpo', { task: 'countdown', checkpoint: 'models/tiny-qwen2/' });
    s().loadVerlPromptLength(tiny);
    expect(sent.at(-1)).toMatchObject({ type: 'verl-prompt-length', config: { checkpoint: 'models/tiny-qwen2/' } });
    s().loadVerlPromptLength({ ...tiny });
    expect(asks(sent)).toBe(1);
    expect(s().verlPromptLength).toMatchObject({ pending: true, promptLength: null });
    reply('verl-prompt-length', { type: 'verl-prompt-length', promptLength: counted });
    await settle();
    expect(s().verlPromptLength).toMatchObject({ pending: false, promptLength: counted, problem: null });
    s().loadVerlPromptLength(tiny);
    expect(asks(sent)).toBe(1);

    // An edit asks again; the answer to it arrives after a second edit and is dropped.
    s().loadVerlPromptLength({ ...tiny, difficulty: 3 });
    s().loadVerlPromptLength({ ...tiny, difficulty: 4 });
    expect(asks(sent)).toBe(3);
    reply('verl-prompt-length', { type: 'verl-prompt-length', promptLength: { ...counted, value: 12 } });
    await settle();
    expect(s().verlPromptLength?.promptLength?.value).toBe(12);
    expect(s().verlPromptLength?.key).toBe(JSON.stringify({ ...tiny, difficulty: 4 }));
  });

  it('keeps the reason when the worker cannot count, and asks again next time', async () => {
    const { s, sent, fail } = lab();
    const c = resolveConfig('grpo', { checkpoint: 'models/missing/' });
    s().loadVerlPromptLength(c);
    fail('verl-prompt-length', 'tokenizer.json: not valid JSON');
    await settle();
    expect(s().verlPromptLength).toMatchObject({
      pending: false,
      promptLength: null,
      problem: 'tokenizer.json: not valid JSON',
    });
    s().loadVerlPromptLength(c);
    expect(asks(sent)).toBe(2);
  });
});
