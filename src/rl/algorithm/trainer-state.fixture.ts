// Test data for the trainer-state tests: complete parameter sets of a model's shapes with distinct, finite values.
// Not a test file and not used outside tests.

import type { ParamArrays } from '../../io/checkpoint';
import type { ModelConfig } from '../../schema/model-config';
import { paramShapes } from '../../core/model-shapes';

/** Every tensor of `dims` filled with `base + i * 1e-6` (distinct per part, so a swap would show). */
export function fixtureParams(dims: ModelConfig, base: number): ParamArrays {
  return Object.fromEntries(
    paramShapes(dims).map(({ name, shape }) => [
      name,
      Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => base + i * 1e-6),
    ]),
  );
}
