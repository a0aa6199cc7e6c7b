// The largest and smallest of a list of numbers of any length, by a loop. Math.max(...list) passes every element
// as an argument and throws "Maximum call stack size exceeded" past about 100,000 of them (an imported run's rows,
// a big batch's completion lengths). A leaf module: every layer may use it. Not a statistics library.

/** The largest of `values`, or `empty` when there are none. NaN counts as in Math.max: any NaN gives NaN. */
export function maxOf(values: Iterable<number>, empty = -Infinity): number {
  let best = empty;
  let any = false;
  for (const v of values) {
    if (Number.isNaN(v)) return NaN;
    if (!any || v > best) best = v;
    any = true;
  }
  return best;
}

/** The smallest of `values`, or `empty` when there are none. NaN counts as in Math.min: any NaN gives NaN. */
export function minOf(values: Iterable<number>, empty = Infinity): number {
  let best = empty;
  let any = false;
  for (const v of values) {
    if (Number.isNaN(v)) return NaN;
    if (!any || v < best) best = v;
    any = true;
  }
  return best;
}
