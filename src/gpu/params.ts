// A kernel's uniform block declared once, as named WGSL fields in struct order: the WGSL `struct` text is generated
// from the declaration, and values are packed by field name at the offsets WGSL's uniform layout rules give
// (scalars align 4, vec2 8, vec3 and vec4 16; the struct's size rounds up to its alignment, the buffer to 16 bytes).

type Scalar = 'u32' | 'i32' | 'f32';
/** The field types a uniform struct may hold. */
export type UniformType = Scalar | `vec2<${Scalar}>` | `vec3<${Scalar}>` | `vec4<${Scalar}>`;
/** A uniform struct's fields, name -> WGSL type, in struct order. */
export type UniformFields = Readonly<Record<string, UniformType>>;

type ValueOf<T extends UniformType> = T extends Scalar
  ? number
  : T extends `vec2<${string}>`
    ? readonly [number, number]
    : T extends `vec3<${string}>`
      ? readonly [number, number, number]
      : readonly [number, number, number, number];
/** One value per field: a number for a scalar, a tuple for a vector. */
export type UniformValues<F extends UniformFields> = { readonly [K in keyof F]: ValueOf<F[K]> };

export interface FieldLayout {
  readonly name: string;
  readonly type: UniformType;
  /** Byte offset in the struct. */
  readonly offset: number;
}

const TYPE = /^(?:(u32|i32|f32)|vec([234])<(u32|i32|f32)>)$/;
const IDENT = /^[A-Za-z][A-Za-z0-9_]*$/;

function shape(type: string): { scalar: Scalar; count: number } {
  const m = TYPE.exec(type);
  if (!m) throw new Error(`uniform type "${type}" is not a 32-bit scalar or vector`);
  return m[1] ? { scalar: m[1] as Scalar, count: 1 } : { scalar: m[3] as Scalar, count: Number(m[2]) };
}

/** Byte offsets of the fields, the struct's size (its WGSL SizeOf) and the uniform buffer's size (16-byte rounded). */
export function uniformLayout(fields: UniformFields): { fields: FieldLayout[]; size: number; bufferSize: number } {
  let end = 0;
  let structAlign = 4;
  const out: FieldLayout[] = [];
  for (const [name, type] of Object.entries(fields)) {
    if (!IDENT.test(name)) throw new Error(`uniform field "${name}" is not a WGSL identifier`);
    const { count } = shape(type);
    const align = count === 1 ? 4 : count === 2 ? 8 : 16;
    const offset = Math.ceil(end / align) * align;
    out.push({ name, type, offset });
    end = offset + 4 * count;
    structAlign = Math.max(structAlign, align);
  }
  const size = Math.ceil(end / structAlign) * structAlign;
  return { fields: out, size, bufferSize: Math.max(16, Math.ceil(size / 16) * 16) };
}

/** A packed uniform block: the words a kernel's uniform buffer holds. */
export class Params {
  constructor(private readonly words: Uint32Array) {}

  toUint32Array(): Uint32Array {
    return this.words;
  }

  /** A key identifying the contents, for caching the uniform buffer. */
  key(): string {
    return this.words.join(',');
  }
}

/** A uniform struct declared once: its WGSL text (`wgsl`) and its packing by field name (`pack`). */
export class UniformStruct<F extends UniformFields = UniformFields> {
  readonly layout: ReturnType<typeof uniformLayout>;
  /** Each field's word index, scalar type and width, worked out once: pack runs for every dispatch. */
  private readonly slots: readonly { name: string; type: UniformType; word: number; scalar: Scalar; count: number }[];

  constructor(
    readonly name: string,
    readonly fields: F,
  ) {
    if (!IDENT.test(name)) throw new Error(`uniform struct name "${name}" is not a WGSL identifier`);
    this.layout = uniformLayout(fields);
    this.slots = this.layout.fields.map((f) => ({ name: f.name, type: f.type, word: f.offset / 4, ...shape(f.type) }));
  }

  /** The WGSL declaration, one field a line. */
  wgsl(): string {
    return [`struct ${this.name} {`, ...this.layout.fields.map((f) => `  ${f.name}: ${f.type},`), '}'].join('\n');
  }

  /** The uniform buffer's words for these values; every field is required and range-checked. */
  pack(values: UniformValues<F>): Params {
    const words = new Uint32Array(this.layout.bufferSize / 4);
    const floats = new Float32Array(words.buffer);
    const ints = new Int32Array(words.buffer);
    const given = values as Readonly<Record<string, number | readonly number[]>>;
    let seen = 0;
    for (const f of this.slots) {
      const v = given[f.name];
      if (f.count === 1 ? typeof v !== 'number' : !Array.isArray(v) || v.length !== f.count)
        throw new Error(`${this.name}.${f.name}: expected ${f.type}, got ${String(v)}`);
      seen++;
      for (let i = 0; i < f.count; i++) {
        const x = f.count === 1 ? (v as number) : (v as readonly number[])[i];
        if (f.scalar === 'f32') floats[f.word + i] = x;
        else if (f.scalar === 'u32') {
          if (!Number.isInteger(x) || x < 0 || x > 0xffffffff)
            throw new Error(`${this.name}.${f.name}: ${x} is not a u32`);
          words[f.word + i] = x;
        } else {
          if (!Number.isInteger(x) || x < -0x80000000 || x > 0x7fffffff)
            throw new Error(`${this.name}.${f.name}: ${x} is not an i32`);
          ints[f.word + i] = x;
        }
      }
    }
    // Every declared field was given; more keys than fields means one the struct does not have.
    if (Object.keys(given).length !== seen) {
      const extra = Object.keys(given).find((k) => !Object.hasOwn(this.fields, k));
      throw new Error(`${this.name}: no uniform field "${extra}"`);
    }
    return new Params(words);
  }
}

/** Declares a uniform struct: `uniforms('Params', { n: 'u32', alpha: 'f32' })`. */
export function uniforms<const F extends UniformFields>(name: string, fields: F): UniformStruct<F> {
  return new UniformStruct(name, fields);
}
