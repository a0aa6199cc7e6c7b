// Every task speaks text to the tiny Hugging Face models' byte-level BPE tokenizers (public/models/): prompts
// round-trip through encode and decode, correct answers keep their verdict after the round trip, prompts stay
// within the token bound the trainer checks the context against (promptTokenBound, with and without the chat
// template), and each task's verifier scores decoded GPU completions of the model without throwing.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { Rng } from '../core/random';
import { textTokens } from '../io/end-of-sequence';
import { encodePrompt, promptTokenBound } from '../rl/learners/sft';
import { getTask, taskFactories, taskNames } from '../tasks';
import { loadHfFolder, type HfFolder } from '../io/hf-folder';
import { GpuPolicy } from './policy';

const MODELS = fileURLToPath(new URL('../../public/models/', import.meta.url));
const NAMES = ['tiny-llama', 'tiny-qwen2'] as const;
const folders = {} as Record<(typeof NAMES)[number], HfFolder>;
for (const name of NAMES) {
  const dir = join(MODELS, name);
  folders[name] = await loadHfFolder({
    bytes: async (f) => new Uint8Array(readFileSync(join(dir, f))),
    text: async (f) => readFileSync(join(dir, f), 'utf8'),
  });
}

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

describe.each(NAMES)('tasks on %s', (name) => {
  const { ck, tokenizer: tok } = folders[name];
  const chatModes = tok.applyChatTemplate ? [false, true] : [false];

  it.each(taskNames)(
    '%s: prompts and answers round-trip, and prompts fit the token bound at every difficulty',
    (taskName) => {
      const { min, max } = getTask(taskName).difficultyRange;
      const rng = new Rng(11);
      for (const d of [min, max]) {
        const task = taskFactories[taskName].create(d);
        for (let i = 0; i < 20; i++) {
          const item = task.sample(rng, i % 2 ? 'heldout' : 'train');
          const ids = encodePrompt(tok, item.prompt);
          expect(tok.decode(ids, { skipSpecialTokens: true })).toBe(item.prompt);
          for (const chat of chatModes) {
            expect(encodePrompt(tok, item.prompt, chat).length, `${item.prompt} (chat ${chat})`).toBeLessThanOrEqual(
              promptTokenBound(tok, task.maxPromptLength, chat),
            );
          }
          const answer = tok.decode(tok.encode(item.answer));
          expect(answer).toBe(item.answer);
          expect(task.verify(item, answer)).toEqual(task.verify(item, item.answer));
        }
      }
    },
  );

  it("every task's verifier scores decoded greedy and sampled completions of the model", async () => {
    const rng = new Rng(5);
    const batch = taskNames.map((taskName) => {
      const task = getTask(taskName);
      return { task, item: task.sample(rng, 'train') };
    });
    const longest = Math.max(...batch.map(({ task }) => task.maxCompletionLength + 1));
    const policy = GpuPolicy.create(ctx, ck.config, ck.params, batch.length);
    try {
      for (const chat of chatModes) {
        for (const greedy of [true, false]) {
          const prompts = batch.map(({ item }) => encodePrompt(tok, item.prompt, chat));
          // The rows share one length: the longest completion any task allows, within the context the longest
          // prompt leaves (a verifier scores a cut completion too).
          const maxNewTokens = Math.min(longest, ck.config.contextLength - Math.max(...prompts.map((p) => p.length)));
          const out = await policy.generate(prompts, {
            maxNewTokens,
            sampler: { temperature: 1, greedy, seed: 9 },
            eosId: tok.eosId,
            eosIds: tok.eosIds,
            padId: tok.padId,
          });
          batch.forEach(({ task, item }, r) => {
            const ids = textTokens(out.tokens.subarray(r * maxNewTokens, r * maxNewTokens + out.lengths[r]), tok);
            const text = tok.decode(ids, { skipSpecialTokens: true });
            const verdict = task.verify(item, text);
            expect(verdict.reward, `${task.name} on ${JSON.stringify(text)}`).toBeGreaterThanOrEqual(0);
            expect(verdict.reward).toBeLessThanOrEqual(1);
            expect(verdict.reason.length).toBeGreaterThan(0);
          });
        }
      }
    } finally {
      policy.destroy();
    }
  });
});
