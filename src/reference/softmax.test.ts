// Finite-difference checks of the softmax and log-softmax backward twins, and their stability at 1e4 logits.

import { describe, expect, it } from 'vitest';
import { compareArrays } from './compare';
import { numericalGradient, weightedSum } from './finite-diff';
import { Rng } from '../core/random';
import { logSoftmaxBackward, logSoftmaxForward, softmaxBackward, softmaxForward } from './softmax';
import { host } from '../core/host-tensor';

const pairs = [
  { name: 'softmax', forward: softmaxForward, backward: softmaxBackward },
  { name: 'logSoftmax', forward: logSoftmaxForward, backward: logSoftmaxBackward },
];

describe('softmax twins', () => {
  for (const { name, forward, backward } of pairs) {
    for (const shape of [
      [1, 1],
      [3, 7],
      [2, 2, 5],
    ]) {
      it(`${name} backward matches finite differences at ${shape.join('x')}`, () => {
        const rng = new Rng(shape.reduce((a, b) => a * 31 + b, 7));
        const n = shape.reduce((a, b) => a * b, 1);
        const x = host(
          Float64Array.from({ length: n }, () => rng.uniform(-3, 3)),
          shape,
        );
        const w = Float64Array.from({ length: n }, () => rng.uniform(-1, 1));
        const y = host(new Float64Array(n), shape);
        const loss = () => {
          forward(y, x);
          return weightedSum(y.data, w);
        };
        const numeric = numericalGradient(loss, x.data as Float64Array);
        forward(y, x);
        const dx = host(new Float64Array(n), shape);
        backward(dx, y, host(w, shape));
        const c = compareArrays(dx.data, numeric, { atol: 1e-7, rtol: 1e-6 });
        expect(c.pass, c.summary).toBe(true);
      });
    }
  }

  it('stays finite and exact for logits of magnitude 1e4', () => {
    const x = host(new Float32Array([1e4, -1e4, 9999, 0]), [1, 4]);
    const y = host(new Float64Array(4), [1, 4]);
    logSoftmaxForward(y, x);
    expect(Array.from(y.data).every(Number.isFinite)).toBe(true);
    expect(y.data[0]).toBeCloseTo(-Math.log(1 + Math.exp(-1)), 10);
    softmaxForward(y, x);
    // ulp(1e4) in f64 is ~1.8e-12, so x - logsumexp carries ~1e-12 of rounding.
    expect(y.data[0] + y.data[2]).toBeCloseTo(1, 10);
  });
});
