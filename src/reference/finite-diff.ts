// Central finite differences of a scalar function, for checking every backward twin.
// Work in Float64Array so that h = 1e-6 gives ~1e-8 accuracy on smooth functions.

/**
 * Numerical gradient of `f` at `x` by central differences: (f(x + h e_i) - f(x - h e_i)) / 2h.
 * `x` is perturbed in place and restored. `indices` limits the check to a subset on large inputs.
 */
export function numericalGradient(
  f: () => number,
  x: Float64Array,
  h = 1e-6,
  indices?: readonly number[],
): Float64Array {
  const grad = new Float64Array(x.length);
  const which = indices ?? Array.from({ length: x.length }, (_, i) => i);
  for (const i of which) {
    const saved = x[i];
    x[i] = saved + h;
    const fp = f();
    x[i] = saved - h;
    const fm = f();
    x[i] = saved;
    grad[i] = (fp - fm) / (2 * h);
  }
  return grad;
}

/** Sum of a[i] * w[i]: turns a tensor output into a scalar with random upstream weights. */
export function weightedSum(a: ArrayLike<number>, w: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * w[i];
  return s;
}
