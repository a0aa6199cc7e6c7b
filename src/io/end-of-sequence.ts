// The ids that end a completion. A model may ship several (Llama 3.2 Instruct's config.json lists 128001, 128008
// and 128009; Qwen's generation_config.json lists <|im_end|> and <|endoftext|>); sampling, completion masks and
// completion text stop at the first of any of them. The GPU decode kernel holds them in a fixed-size uniform array,
// so their number is bounded; a config that lists more is refused at load by name.

import { clipText } from '../schema/fields';

/** Most end-of-sequence ids one model may have (the decode kernel's uniform holds two vec4<u32>). */
export const MAX_EOS_IDS = 8;

/** Where the ids come from: the first (`eosId`) and, when there are several, all of them (`eosIds`). */
export interface EndOfSequence {
  readonly eosId: number;
  /** Every end-of-sequence id, when there are several; `eosId` counts whether or not it is listed. */
  readonly eosIds?: readonly number[];
}

/** Every id that ends a completion: `eosId` first, then the others of `eosIds` in order, without repeats. */
export function endOfSequenceIds(s: EndOfSequence): number[] {
  return [...new Set([s.eosId, ...(s.eosIds ?? [])])];
}

/** A problem with a list of end-of-sequence ids read from `field`, or null when it is usable. */
export function endOfSequenceListProblem(field: string, ids: readonly unknown[]): string | null {
  if (ids.length === 0 || !ids.every((x) => Number.isSafeInteger(x) && (x as number) >= 0))
    return `${field} must be an id or a non-empty list of ids, got ${clipText(JSON.stringify(ids))}`;
  const distinct = new Set(ids).size;
  if (distinct > MAX_EOS_IDS)
    return `${field} lists ${distinct} end-of-sequence ids; at most ${MAX_EOS_IDS} are supported`;
  return null;
}

/**
 * The ids of a completion before its first end-of-sequence id of any kind, that id and everything after it left
 * out: what a completion's text is decoded from.
 */
export function textTokens(ids: ArrayLike<number>, eos: EndOfSequence): number[] {
  const stop = new Set(endOfSequenceIds(eos));
  const out: number[] = [];
  for (let i = 0; i < ids.length && !stop.has(ids[i]); i++) out.push(ids[i]);
  return out;
}
