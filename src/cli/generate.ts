// `npm run generate -- --checkpoint <dir | org/name[@rev]> --prompt "..." [--greedy | --temperature t --seed s] [--json]`:
// one completion from a checkpoint (the lab's own or a Hugging Face Llama/Qwen2 folder with its BPE tokenizer), on
// the GPU through Dawn; --json adds the prompt's and the completion's token ids and every token's log-probability. A
// checkpoint with non-finite weights or a tokenizer larger than the model's vocab_size is refused (exit 2) before
// any sampling, by loadCheckpointDir.

import { GpuPolicy } from '../model/policy';
import { textTokens } from '../io/end-of-sequence';
import { encodePrompt } from '../rl/learners/sft';
import { UsageError, helpText, parseArgs, runCli, settingFlag, type FlagSpec } from './args';
import { loadCheckpointDir } from './files';
import { fetchHubModel, hubOptionsFromEnv, hubRepoOf } from './hub-cache';
import { SETTINGS } from '../schema/config';
import { AUTOTUNE_FLAG, acquireTunedDevice } from './tuned-device';

const FLAGS: Record<string, FlagSpec> = {
  checkpoint: {
    type: 'string',
    doc: 'checkpoint directory (model.safetensors or shards, config.json, tokenizer.json, tokenizer_config.json), or a hub id org/name[@revision] (downloaded from --hf_endpoint)',
  },
  hf_endpoint: settingFlag(SETTINGS.hf_endpoint),
  prompt: { type: 'string', doc: 'prompt text (BOS is added when the tokenizer puts one first)' },
  chat: { type: 'boolean', doc: "give the prompt as one user message through the tokenizer's chat template" },
  greedy: { type: 'boolean', doc: 'argmax decoding' },
  temperature: { type: 'number', doc: 'sampling temperature', min: 0, max: 10, default: 1 },
  'top-k': { type: 'number', doc: 'keep the k most likely tokens (0: off)', integer: true, min: 0, default: 0 },
  'top-p': { type: 'number', doc: 'nucleus mass (1: off)', min: 0, max: 1, default: 1 },
  'min-p': { type: 'number', doc: 'keep tokens with p >= min-p * p_max (0: off)', min: 0, max: 1, default: 0 },
  seed: { type: 'number', doc: 'sampling seed', integer: true, min: 0, default: 0 },
  'max-new-tokens': { type: 'number', doc: 'longest completion', integer: true, min: 1, default: 32 },
  json: { type: 'boolean', doc: 'print JSON with per-token log-probabilities' },
  autotune: AUTOTUNE_FLAG,
  help: { type: 'boolean', doc: 'show this help' },
};

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  if (args.help) {
    process.stdout.write(helpText('usage: npm run generate -- --checkpoint <dir> --prompt "..." [flags]', FLAGS));
    return 0;
  }
  if (typeof args.checkpoint !== 'string') throw new UsageError('--checkpoint is required');
  if (typeof args.prompt !== 'string') throw new UsageError('--prompt is required');
  // A hub id is downloaded into the cache (or found there) first; the folder is then read as any other.
  const hubOptions = hubOptionsFromEnv(typeof args.hf_endpoint === 'string' ? args.hf_endpoint : null);
  const repo = hubRepoOf('checkpoint', args.checkpoint);
  const dir = repo
    ? await fetchHubModel(repo, 'checkpoint', { ...hubOptions, log: (line) => console.error(line) })
    : args.checkpoint;
  const { ck, tok } = await loadCheckpointDir(dir);
  if (args.chat && !tok.applyChatTemplate)
    throw new UsageError(
      `--chat: the tokenizer of ${args.checkpoint} has no chat template (tokenizer_config.json chat_template)`,
    );
  const prompt = encodePrompt(tok, args.prompt, Boolean(args.chat));
  const S = Math.min(args['max-new-tokens'] as number, ck.config.contextLength - prompt.length);
  if (S < 1)
    throw new UsageError(
      `the prompt (${prompt.length} tokens) leaves no room in the model's context of ${ck.config.contextLength}`,
    );
  const ctx = await acquireTunedDevice({ tune: Boolean(args.autotune) });
  const policy = GpuPolicy.create(ctx, ck.config, ck.params, 1);
  const out = await policy.generate([prompt], {
    maxNewTokens: S,
    sampler: {
      temperature: args.temperature as number,
      greedy: Boolean(args.greedy),
      topK: args['top-k'] as number,
      topP: args['top-p'] as number,
      minP: args['min-p'] as number,
      seed: args.seed as number,
    },
    eosId: tok.eosId,
    eosIds: tok.eosIds,
    padId: tok.padId,
  });
  const ids = Array.from(out.tokens.subarray(0, out.lengths[0]));
  const text = tok.decode(textTokens(ids, tok), { skipSpecialTokens: true });
  if (args.json) {
    const tokens = ids.map((id, i) => ({
      id,
      token: tok.tokenString(id),
      logprob: out.logprobs[i],
      entropy: out.entropies[i],
    }));
    console.log(
      JSON.stringify(
        {
          prompt: args.prompt,
          prompt_ids: prompt,
          completion: text,
          completion_ids: ids,
          finished: out.finished[0],
          tokens,
        },
        null,
        2,
      ),
    );
  } else {
    console.log(text);
  }
  policy.destroy();
  ctx.destroy();
  return 0;
}

runCli('generate', main);
