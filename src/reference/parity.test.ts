// The CPU reference model against PyTorch: logits, loss and every parameter gradient of the tiny Llama in
// public/fixtures/llama-parity.safetensors (scripts/make-parity-fixture.py), in f32 and in f64.
// Parity error per tensor = max|got - want| / max|want|; must be < 1e-4.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readSafetensors } from '../io/safetensors';
import { crossEntropyBackward, crossEntropyForward } from './cross-entropy';
import { fixtureLossInputs, parityError, parityFixtureFrom, type ParityFixture } from './fixture';
import { modelBackward, modelForward } from './model';
import { paramShapes, type ModelParams } from '../core/model-shapes';
import { host } from '../core/host-tensor';

const TOL = 1e-4;

function loadFixture(): ParityFixture {
  const bytes = readFileSync(new URL('../../public/fixtures/llama-parity.safetensors', import.meta.url));
  const file = readSafetensors(new Uint8Array(bytes), { copy: true });
  return parityFixtureFrom(file.tensors, file.metadata);
}

describe('reference model vs PyTorch (llama-parity.safetensors)', () => {
  const fx = loadFixture();

  it('the fixture has every parameter, its gradient, and the documented dims', () => {
    expect(fx.dims).toMatchObject({
      vocabSize: 37,
      dModel: 16,
      nLayers: 2,
      nHeads: 4,
      nKvHeads: 2,
      dFF: 40,
      tiedEmbeddings: true,
    });
    expect([fx.B, fx.T]).toEqual([2, 7]);
    expect(Object.keys(fx.params).sort()).toEqual(
      paramShapes(fx.dims)
        .map((p) => p.name)
        .sort(),
    );
    expect(Object.keys(fx.expected.grads).sort()).toEqual(Object.keys(fx.params).sort());
  });

  it.each(['f32', 'f64'] as const)('logits, loss and every gradient match within 1e-4 (%s)', (dtype) => {
    const params: ModelParams =
      dtype === 'f32'
        ? fx.params
        : Object.fromEntries(Object.entries(fx.params).map(([k, t]) => [k, host(Float64Array.from(t.data), t.shape)]));
    const { B, T, dims } = fx;
    const { logits, cache } = modelForward(dims, params, fx.tokens, B, T);
    const { targets, mask } = fixtureLossInputs(fx);
    const N = B * T;
    const logits2 = host(logits.data, [N, dims.vocabSize]);
    const loss = host(new Float64Array(1), [1]);
    crossEntropyForward(loss, logits2, targets, mask);
    const dLogits = host(
      dtype === 'f32' ? new Float32Array(logits.data.length) : new Float64Array(logits.data.length),
      [N, dims.vocabSize],
    );
    crossEntropyBackward(dLogits, logits2, targets, mask);
    const grads = modelBackward(dims, params, cache, host(dLogits.data, [B, T, dims.vocabSize]));

    const errors: [string, number][] = [
      ['logits', parityError(logits.data, fx.expected.logits)],
      ['loss', parityError(loss.data, [fx.expected.loss])],
    ];
    for (const { name } of paramShapes(dims))
      errors.push([`grad.${name}`, parityError(grads[name].data, fx.expected.grads[name])]);
    console.log(
      `parity (${dtype}), max|got-want|/max|want|:\n` +
        errors.map(([n, e]) => `  ${n.padEnd(52)} ${e.toExponential(2)}`).join('\n'),
    );
    for (const [name, e] of errors) expect(e, `${name}: parity error ${e}`).toBeLessThan(TOL);
  });
});
