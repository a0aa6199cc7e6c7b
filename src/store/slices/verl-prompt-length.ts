// The "Run elsewhere" panel's verl prompt length: the verl export writes data.max_prompt_length in the tokens of the
// model the config trains, and that model's tokenizer is the engine's (a checkpoint of the site, a hub snapshot in
// OPFS, a folder imported into IndexedDB; its tokenizer packages stay off the page), so the page asks the worker to
// count (export/render.ts verlPromptLengthOf) and passes the count to the export. One answer per config is kept; an
// answer for a config no longer asked about is dropped.

import type { PromptLength } from '../../export';
import type { RLConfig } from '../../schema/config';
import type { LabSlice } from '../slice';

/** verl's prompt length of one config (its JSON), or why the worker could not count it. */
export interface VerlPromptLength {
  key: string;
  pending: boolean;
  promptLength: PromptLength | null;
  problem: string | null;
}

export interface VerlPromptLengthSlice {
  verlPromptLength: VerlPromptLength | null;
  /** Asks the worker for the verl export's prompt length of `config`, unless it is here or on its way. */
  loadVerlPromptLength(config: RLConfig): void;
}

/** The key of a config's answer: the config itself (the prompts and the model both come from it). */
export const verlPromptLengthKey = (config: RLConfig) => JSON.stringify(config);

export const verlPromptLengthSlice: LabSlice<VerlPromptLengthSlice> =
  ({ link }) =>
  (set, get) => ({
    verlPromptLength: null,

    loadVerlPromptLength(config) {
      const key = verlPromptLengthKey(config);
      const last = get().verlPromptLength;
      // An answer already here (or on its way) for this config is not asked for again; a failed ask is retried.
      if (last?.key === key && (last.pending || last.promptLength)) return;
      set({ verlPromptLength: { key, pending: true, promptLength: null, problem: null } });
      const done = (promptLength: PromptLength | null, problem: string | null) => {
        if (get().verlPromptLength?.key === key)
          set({ verlPromptLength: { key, pending: false, promptLength, problem } });
      };
      link.request({ type: 'verl-prompt-length', config }).then(
        (r) => done(r.promptLength, null),
        (e: unknown) => done(null, e instanceof Error ? e.message : String(e)),
      );
    },
  });
