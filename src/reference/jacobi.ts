// Exact singular values for tests: the cyclic Jacobi eigenvalue method on a symmetric matrix in f64, and the
// squared singular values of an (R, C) matrix as the eigenvalues of its smaller Gram matrix. The oracle the power
// iteration of weight-stats.ts is checked against; slow (O(n^3) per sweep), meant for matrices of a few hundred rows.

/** Eigenvalues of the symmetric n x n matrix `a` (row-major; only read), in descending order. */
export function symmetricEigenvalues(
  a: ArrayLike<number>,
  n: number,
  opts: { tol?: number; maxSweeps?: number } = {},
): number[] {
  if (a.length !== n * n) throw new Error(`symmetricEigenvalues: want ${n * n} elements, got ${a.length}`);
  const m = Float64Array.from(a);
  const tol = opts.tol ?? 1e-15;
  const maxSweeps = opts.maxSweeps ?? 100;
  let scale = 0;
  for (let i = 0; i < m.length; i++) scale += m[i] * m[i];
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += m[p * n + q] * m[p * n + q];
    if (off <= tol * tol * scale) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = m[p * n + q];
        if (apq === 0) continue;
        // The rotation that zeroes a_pq (Golub and Van Loan, symmetric Schur decomposition).
        const theta = (m[q * n + q] - m[p * n + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = m[k * n + p];
          const akq = m[k * n + q];
          m[k * n + p] = c * akp - s * akq;
          m[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = m[p * n + k];
          const aqk = m[q * n + k];
          m[p * n + k] = c * apk - s * aqk;
          m[q * n + k] = s * apk + c * aqk;
        }
      }
    }
  }
  return Array.from({ length: n }, (_, i) => m[i * n + i]).sort((x, y) => y - x);
}

/** Squared singular values of the (R, C) matrix `x` (row-major), descending: the eigenvalues of its smaller Gram matrix. */
export function squaredSingularValues(x: ArrayLike<number>, R: number, C: number): number[] {
  if (x.length !== R * C) throw new Error(`squaredSingularValues: want ${R * C} elements, got ${x.length}`);
  const byRows = R <= C; // x x^T (R x R) when there are fewer rows, else x^T x (C x C)
  const n = byRows ? R : C;
  const g = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      let s = 0;
      if (byRows) for (let k = 0; k < C; k++) s += x[i * C + k] * x[j * C + k];
      else for (let k = 0; k < R; k++) s += x[k * C + i] * x[k * C + j];
      g[i * n + j] = s;
      g[j * n + i] = s;
    }
  }
  return symmetricEigenvalues(g, n).map((l) => Math.max(0, l));
}
