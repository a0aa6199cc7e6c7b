// Kernel parameters as a uniform block of 32-bit words, built field by field in WGSL struct order.
// Only u32/i32/f32 scalars, so the WGSL struct has no padding surprises.

export class Params {
  private readonly words: number[] = [];
  private readonly view = new DataView(new ArrayBuffer(4));

  u32(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new Error(`kernel parameter ${v} is not a u32`);
    this.words.push(v >>> 0);
    return this;
  }

  i32(v: number): this {
    if (!Number.isInteger(v)) throw new Error(`kernel parameter ${v} is not an i32`);
    this.words.push(v >>> 0);
    return this;
  }

  f32(v: number): this {
    this.view.setFloat32(0, v, true);
    this.words.push(this.view.getUint32(0, true));
    return this;
  }

  /** Padded to 16 bytes, as uniform buffers require. */
  toUint32Array(): Uint32Array {
    const n = Math.max(4, Math.ceil(this.words.length / 4) * 4);
    const out = new Uint32Array(n);
    out.set(this.words);
    return out;
  }

  /** A key identifying the contents, for caching the uniform buffer. */
  key(): string {
    return this.words.join(',');
  }
}
