// The end-of-sequence id list: its order and repeats, the bound the decode kernel sets, and where a completion's
// text stops.

import { describe, expect, it } from 'vitest';
import { endOfSequenceIds, endOfSequenceListProblem, MAX_EOS_IDS, textTokens } from './end-of-sequence';

describe('end-of-sequence ids', () => {
  it('puts eosId first and drops repeats; one id alone when there is no list', () => {
    expect(endOfSequenceIds({ eosId: 2 })).toEqual([2]);
    expect(endOfSequenceIds({ eosId: 128009, eosIds: [128001, 128008, 128009] })).toEqual([128009, 128001, 128008]);
    expect(endOfSequenceIds({ eosId: 5, eosIds: [5, 5, 7] })).toEqual([5, 7]);
  });

  it(`refuses a list that is empty, holds a non-id, or names more than ${MAX_EOS_IDS} ids, by field`, () => {
    expect(endOfSequenceListProblem('eos_token_id', [128001, 128008, 128009])).toBeNull();
    expect(endOfSequenceListProblem('eos_token_id', [])).toMatch(/^eos_token_id must be an id or a non-empty list/);
    expect(endOfSequenceListProblem('eos_token_id', [1, -2])).toMatch(/got \[1,-2\]/);
    expect(endOfSequenceListProblem('eos_token_id', [1, 'x'])).toMatch(/non-empty list of ids/);
    const nine = Array.from({ length: 9 }, (_, i) => 100 + i);
    expect(endOfSequenceListProblem('eos_token_id', nine)).toBe(
      'eos_token_id lists 9 end-of-sequence ids; at most 8 are supported',
    );
    // Repeats count once.
    expect(endOfSequenceListProblem('eos_token_id', [...nine.slice(0, 8), 100])).toBeNull();
  });

  it("stops a completion's text at its first end-of-sequence id of any kind", () => {
    const eos = { eosId: 2, eosIds: [2, 7] };
    expect(textTokens([5, 9, 7, 4, 2], eos)).toEqual([5, 9]);
    expect(textTokens([5, 2, 7], eos)).toEqual([5]);
    expect(textTokens(Uint32Array.from([5, 9, 4]), eos)).toEqual([5, 9, 4]);
    expect(textTokens([7], eos)).toEqual([]);
    // One id: what filtering that id out of a completion that ends at it gave before.
    expect(textTokens([5, 9, 2], { eosId: 2 })).toEqual([5, 9]);
    expect(textTokens([5, 7, 9], { eosId: 2 })).toEqual([5, 7, 9]);
  });
});
