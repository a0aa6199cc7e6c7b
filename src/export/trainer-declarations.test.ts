// The exports as the real trainers read them: every preset's OpenRLHF command through OpenRLHF's own argparse
// declarations (fixtures/openrlhf-args.json, recorded from its parser), booleans in each trainer's declared form,
// verl's data.max_prompt_length in the model's tokens with its chat template, and the TRL script on a machine
// without a GPU. The interop tier (npm run test:interop, scripts/interop/) runs the trainers' own code on the same.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRESET_NAMES, resolveConfig, type RLConfig } from '../schema/config';
import { tokenizerFromFiles } from '../io/hf-folder';
import { OPENRLHF_FLAGS, booleanForm, parseOpenrlhfArgv } from './declarations';
import { estimatorRefusal, exportExperiment, mappingRows } from '.';
import openrlhfArgs from './fixtures/openrlhf-args.json';
import openrlhfFields from './fixtures/openrlhf.json';

/** The words of a launch script's ARGS=( ... ) array as bash makes them, with $MODEL and $HERE given. */
function launchArgv(script: string, env: Record<string, string>): string[] {
  const body = script.slice(script.indexOf('ARGS=(\n') + 'ARGS=(\n'.length, script.indexOf('\n)\n'));
  const words: string[] = [];
  for (const line of body.split('\n')) {
    const text = line.trim();
    if (text.startsWith('#')) continue;
    let i = 0;
    while (i < text.length) {
      if (text[i] === ' ') {
        i++;
        continue;
      }
      let word = '';
      while (i < text.length && text[i] !== ' ') {
        if (text[i] === "'") {
          const end = text.indexOf("'", i + 1);
          word += text.slice(i + 1, end);
          i = end + 1;
        } else if (text[i] === '"') {
          const end = text.indexOf('"', i + 1);
          word += text.slice(i + 1, end).replace(/\$(\w+)/g, (_, name: string) => env[name]);
          i = end + 1;
        } else if (text[i] === '\\') {
          word += text[i + 1];
          i += 2;
        } else word += text[i++];
      }
      words.push(word);
    }
  }
  return words;
}

const ENV = { MODEL: 'org/base', HERE: '/runs/export' };

describe("OpenRLHF's own parser (its recorded declarations)", () => {
  it('records the flags the field list names, each a switch or a value flag', () => {
    expect(Object.keys(OPENRLHF_FLAGS).sort()).toEqual([...openrlhfFields.flags].sort());
    expect(openrlhfArgs.commit).toBe(openrlhfFields.commit);
    expect(OPENRLHF_FLAGS['--data.apply_chat_template'].action).toBe('store_true');
    expect(OPENRLHF_FLAGS['--actor.gradient_checkpointing_enable'].action).toBe('store_true');
    expect(OPENRLHF_FLAGS['--actor.eps_clip_low_high']).toMatchObject({ action: 'store', nargs: 2, type: 'float' });
  });

  it('reads a command as argparse does: a switch takes no value, so "false" after it is an unrecognized argument', () => {
    expect(parseOpenrlhfArgv(['--data.apply_chat_template', 'false'])).toEqual({
      ok: false,
      error: 'unrecognized arguments: false',
    });
    expect(parseOpenrlhfArgv(['--data.apply_chat_template', '--actor.eps_clip_low_high', '0.2', '0.28'])).toEqual({
      ok: true,
      values: { 'data.apply_chat_template': true, 'actor.eps_clip_low_high': [0.2, 0.28] },
    });
    expect(parseOpenrlhfArgv(['--actor.eps_clip_low_high', '0.2']).ok).toBe(false);
    expect(parseOpenrlhfArgv(['--train.batch_size', '1.5'])).toEqual({
      ok: false,
      error: "argument --train.batch_size: invalid int value: '1.5'",
    });
    expect(parseOpenrlhfArgv(['--algo.kl.estimator', 'k4'])).toEqual({
      ok: false,
      error: "argument --algo.kl.estimator: invalid choice: 'k4'",
    });
    expect(parseOpenrlhfArgv(['--no.such.flag', '1']).ok).toBe(false);
  });

  for (const preset of PRESET_NAMES)
    for (const on of [false, true])
      it(`${preset}, chat_template and gradient_checkpointing ${on}: the command parses, with the switches as set`, () => {
        const c: RLConfig = resolveConfig(preset, {
          task: 'countdown',
          chat_template: on,
          gradient_checkpointing: on,
          ...(on ? { checkpoint: 'models/tiny-qwen2/' } : {}),
        });
        const refusal = estimatorRefusal('openrlhf', c);
        if (refusal) {
          // OpenRLHF computes no estimator of this preset's (openrlhf-estimators.test.ts): refused, not parsed.
          expect(() => exportExperiment('openrlhf', c, { preset, model: 'm', maxRows: 1 })).toThrow(refusal);
          return;
        }
        const script = exportExperiment('openrlhf', c, { preset, model: 'm', maxRows: 1 }).files[0].text;
        const parsed = parseOpenrlhfArgv(launchArgv(script, ENV));
        expect(parsed, script).toMatchObject({ ok: true });
        if (!parsed.ok) return;
        expect(parsed.values['data.apply_chat_template'] ?? false).toBe(on);
        expect(parsed.values['actor.gradient_checkpointing_enable'] ?? false).toBe(on);
        expect(parsed.values['actor.model_name_or_path']).toBe('org/base');
      });

  it('says in the mapping that a false switch is not given', () => {
    const row = mappingRows('openrlhf', resolveConfig('grpo', {})).find((r) => r.field === 'chat_template')!;
    expect(row.settings).toEqual([]);
    expect(row.comment).toMatch(/^false: --data\.apply_chat_template not given \(a switch: store_true/);
  });

  it('writes a boolean as a value for TRL and verl, whose fields and overrides take one', () => {
    expect(booleanForm('trl', 'gradient_checkpointing')).toBe('value');
    expect(booleanForm('verl', 'actor_rollout_ref.model.enable_gradient_checkpointing')).toBe('value');
    expect(booleanForm('openrlhf', '--algo.kl.use_loss')).toBe('switch');
    expect(() => booleanForm('openrlhf', '--train.batch_size')).toThrow(/declared store of int/);
    const c = resolveConfig('grpo', { gradient_checkpointing: false });
    const verl = exportExperiment('verl', c, { preset: 'grpo', model: 'm', maxRows: 1 }).files[0].text;
    expect(verl).toContain("'actor_rollout_ref.model.enable_gradient_checkpointing=False'");
    const trl = exportExperiment('trl', c, { preset: 'grpo', model: 'm', maxRows: 1 }).files[0].text;
    expect(trl).toContain('    gradient_checkpointing=False,');
  });
});

describe("verl's data.max_prompt_length", () => {
  const dir = 'public/models/tiny-qwen2';
  const tokenizer = () =>
    tokenizerFromFiles(
      readFileSync(`${dir}/tokenizer.json`, 'utf8'),
      readFileSync(`${dir}/tokenizer_config.json`, 'utf8'),
    );

  it("is the longest exported prompt in the model's tokens, its chat template applied", async () => {
    const tok = await tokenizer();
    const c = resolveConfig('grpo', { task: 'countdown', steps: 3, checkpoint: 'models/tiny-qwen2/' });
    const e = exportExperiment('verl', c, { preset: 'grpo', model: 'm', tokenizer: tok });
    const rows = ['data/train.jsonl', 'data/heldout.jsonl'].flatMap((p) =>
      e.files
        .find((f) => f.path === p)!
        .text.trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { prompt: { role: string; content: string }[] }),
    );
    // The template of tiny-qwen2 (ChatML) written out by hand: each user message, then the generation prompt.
    const longest = Math.max(
      ...rows.map(
        (r) =>
          tok.encode(
            `${r.prompt.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('')}<|im_start|>assistant\n`,
          ).length,
      ),
    );
    const longestChars = Math.max(...rows.map((r) => r.prompt[0].content.length));
    expect(longest).toBeGreaterThan(longestChars + 1);
    expect(e.files[0].text).toContain(`'data.max_prompt_length=${longest}'`);
    expect(e.files[0].text).toContain("# data.max_prompt_length: the longest prompt in the model's tokens");
  });

  it('says when no tokenizer was given that it counted characters', () => {
    const c = resolveConfig('grpo', { task: 'countdown' });
    const text = exportExperiment('verl', c, { preset: 'grpo', model: 'm', maxRows: 1 }).files[0].text;
    expect(text).toContain('no tokenizer was given');
  });
});

describe('the TRL script on a machine without a GPU', () => {
  for (const preset of ['grpo', 'dapo', 'rloo'] as const)
    it(`${preset}: trains on the CPU where no GPU is present, bf16 only where the GPU has it`, () => {
      const text = exportExperiment('trl', resolveConfig(preset, { lora_rank: 4 }), {
        preset,
        model: 'm',
        maxRows: 1,
      }).files[0].text;
      expect(text).toContain('\nimport torch\n');
      expect(text).toContain('    use_cpu=not torch.cuda.is_available(),\n');
      expect(text).toContain('    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),\n');
      expect(text).toContain('\ntrainer.train()\n');
      expect(text).toContain('\ntrainer.save_state()\n');
      expect(text).toContain('    logging_steps=1,');
    });
});
