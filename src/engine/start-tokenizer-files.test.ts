// The tokenizer files of the model a config trains, as the worker hands them to the page for the verl export's
// data.max_prompt_length: the checkpoint folder's own (its chat template inside), the character vocabulary for a
// fresh model or a folder without tokenizer.json, and the worker's count of the prompt length (verlPromptLengthOf)
// makes the same verl script as the CLI's export.

import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../schema/config';
import { tokenizerFromFiles } from '../io/hf-folder';
import { exportExperiment, verlPromptLengthOf } from '../export';
import { PUBLIC_ASSETS } from './node-assets';
import { CHAR_TOKENIZER_PATH, loadStartTokenizerFiles, type AssetLoader } from './start-policy';

/** The site's files, counting what is read: no weights. */
const read: string[] = [];
const ASSETS: AssetLoader = {
  bytes: (p) => (read.push(p), PUBLIC_ASSETS.bytes(p)),
  text: (p) => (read.push(p), PUBLIC_ASSETS.text(p)),
};

const maxPromptLength = (text: string) => Number(/'data\.max_prompt_length=(\d+)'/.exec(text)?.[1]);

describe('loadStartTokenizerFiles', () => {
  it("reads a checkpoint folder's tokenizer.json and tokenizer_config.json, and never its weights", async () => {
    read.length = 0;
    const c = resolveConfig('grpo', { task: 'countdown', checkpoint: 'models/tiny-qwen2/' });
    const files = await loadStartTokenizerFiles(c, ASSETS);
    expect(files.tokenizerJson).toBe(await PUBLIC_ASSETS.text('models/tiny-qwen2/tokenizer.json'));
    expect(files.tokenizerConfigJson).toBe(await PUBLIC_ASSETS.text('models/tiny-qwen2/tokenizer_config.json'));
    expect(read.every((p) => p.endsWith('.json'))).toBe(true);

    // What the worker answers the page (verlPromptLengthOf with the tokenizer built from these files) makes the same
    // verl script as the CLI's export with that tokenizer: the prompts in the model's tokens, its chat template
    // applied, more than the task's characters + 1 written without one.
    const tok = await tokenizerFromFiles(files.tokenizerJson, files.tokenizerConfigJson);
    const options = { preset: 'grpo' as const, model: 'm' };
    const page = exportExperiment('verl', c, { ...options, promptLength: verlPromptLengthOf(c, tok) }).files[0].text;
    const cli = exportExperiment('verl', c, { ...options, tokenizer: tok }).files[0].text;
    const withChars = exportExperiment('verl', c, options).files[0].text;
    expect(page).toBe(cli);
    expect(page).toContain("# data.max_prompt_length: the longest prompt in the model's tokens");
    expect(maxPromptLength(page)).toBeGreaterThan(maxPromptLength(withChars));
  });

  it('gives the character vocabulary for a fresh model and for a folder without tokenizer.json', async () => {
    const char = await PUBLIC_ASSETS.text(CHAR_TOKENIZER_PATH);
    expect(await loadStartTokenizerFiles(resolveConfig('grpo', {}), ASSETS)).toEqual({
      tokenizerJson: char,
      tokenizerConfigJson: null,
    });
    // A folder of the lab's older checkpoints: config.json and weights only.
    const bare: AssetLoader = {
      bytes: (p) => ASSETS.bytes(p),
      text: (p) =>
        p.endsWith('tokenizer.json') && p !== CHAR_TOKENIZER_PATH
          ? Promise.reject(new Error(`${p}: not found`))
          : ASSETS.text(p),
    };
    const c = resolveConfig('grpo', { checkpoint: 'models/tiny-qwen2/' });
    const files = await loadStartTokenizerFiles(c, bare);
    expect(files.tokenizerJson).toBe(char);
  });
});
