// Seeded host-side random numbers for tests, initialization and demonstrations.
// Not the GPU sampler's RNG (that one is counter-based and lives with the sampler kernel).

/** A small, fast, seeded PRNG (mulberry32). `next()` is uniform in [0, 1). */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = (seed >>> 0) ^ 0x9e3779b9;
  }
  /** The generator's whole state (one 32-bit word), for checkpoints that resume exactly. */
  getState(): number {
    return this.state;
  }
  /** Restores a state from getState(). */
  setState(state: number): void {
    this.state = state >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Uniform in [lo, hi). */
  uniform(lo = -1, hi = 1): number {
    return lo + (hi - lo) * this.next();
  }
  /** Standard normal (Box-Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/** A Float32Array of uniform values in [lo, hi), never all zeros. */
export function randomArray(rng: Rng, n: number, lo = -1, hi = 1): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = rng.uniform(lo, hi);
  return out;
}
