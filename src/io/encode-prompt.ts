// A prompt's token ids as the policy is given them (BOS, or the model's chat template around one user message): the
// one rule the trainer, the evaluator, the CLI's generate and the exports' prompt lengths share.

import type { Tokenizer } from './tokenizer';

/**
 * Token ids of a prompt: [BOS] prompt (BOS when the tokenizer puts one first), or with `chat` the tokenizer's chat
 * template around it as one user message, encoded without adding BOS (the template writes it where it wants one),
 * as transformers' apply_chat_template does. Throws when `chat` is asked of a tokenizer without a template.
 */
export function encodePrompt(tok: Tokenizer, prompt: string, chat = false): number[] {
  if (chat) {
    if (!tok.applyChatTemplate)
      throw new Error(
        "chat_template: this model's tokenizer has no chat template (tokenizer_config.json chat_template)",
      );
    return tok.encode(tok.applyChatTemplate(prompt));
  }
  return tok.prependsBos ? [tok.bosId, ...tok.encode(prompt)] : tok.encode(prompt);
}
