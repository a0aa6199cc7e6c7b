// The round-robin sampler of the benchmark: every piece is timed once per round after the warm-up rounds, and each
// round starts one piece later, so no piece always follows the same one. Order only; no timing is asserted.
import { expect, it } from 'vitest';
import { interleavedSamples, median } from './measure';

it('times each piece once per round, rotating which piece goes first', async () => {
  const order: string[] = [];
  const piece = (name: string) => [name, async () => void order.push(name)] as const;
  const samples = await interleavedSamples([piece('a'), piece('b'), piece('c')], 3, 1);
  expect(order).toEqual(['a', 'b', 'c', 'b', 'c', 'a', 'c', 'a', 'b', 'a', 'b', 'c']);
  expect(Object.values(samples).map((xs) => xs.length)).toEqual([3, 3, 3]);
});

it('takes the median of an even count as the mean of the middle two', () => {
  expect(median([4, 1, 3, 2])).toBe(2.5);
  expect(median([5, 1, 3])).toBe(3);
});
