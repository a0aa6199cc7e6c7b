// Half-precision operands for f32 kernels: rewrites a kernel's WGSL so that one read-only f32 storage array (and
// its vec4 view, if it has one) is read from bf16 or f16 storage instead, every element widened to f32 on load, so
// arithmetic and accumulation stay f32. The f32 source is untouched (its outputs stay bit-identical); the half
// variant is generated from it, so every entry point of the kernel gets its half twin without a second copy.
// Storage layout (src/gpu/tensor.ts): element e is the (e & 1) half of 32-bit word e >> 1, low half first.
//   bf16:       u32 words, `bitcast<f32>(w << 16)` / `bitcast<f32>(w & 0xffff0000u)`: exact, every adapter.
//   f16-packed: u32 words through unpack2x16float: every adapter.
//   f16-native: `enable f16;` and array<f16> / array<vec4<f16>>, where the device has shader-f16.
// CPU twin of the storage: src/core/half.ts (roundToWeightDtype): a kernel reading half storage equals the f32
// kernel run on the rounded values.

import { isHalfStorage, type DType, type HalfStorage } from '../gpu';

/** How a kernel reads a half operand. */
export type HalfCodec = 'bf16' | 'f16-packed' | 'f16-native';

/** The codec for a half dtype on a device: f16 natively where the device has shader-f16, else through u32 words. */
export function halfCodec(dtype: HalfStorage, device: GPUDevice): HalfCodec {
  if (dtype === 'bf16') return 'bf16';
  return device.features.has('shader-f16') ? 'f16-native' : 'f16-packed';
}

/** The codec for an operand's dtype on a device, or null for f32. Other dtypes are refused, naming the operand. */
export function operandCodec(kernel: string, what: string, dtype: DType, device: GPUDevice): HalfCodec | null {
  if (dtype === 'f32') return null;
  if (isHalfStorage(dtype)) return halfCodec(dtype, device);
  throw new Error(`${kernel}: ${what} must be f32, bf16 or f16, got ${dtype}`);
}

/**
 * The half storage of `name` bound at `binding` and its loaders: `load_${name}` per element (unless `scalar` is
 * false: an array read only through its vec4 view) and `load_${vec4Name}` per vec4.
 */
function loaders(name: string, codec: HalfCodec, binding: string, vec4Name: string | null, scalar = true): string {
  const load = `load_${name}`;
  if (codec === 'f16-native') {
    const lines = scalar
      ? [
          `${binding} var<storage, read> ${name}_h: array<f16>; // half storage of ${name}`,
          `fn ${load}(i: u32) -> f32 { return f32(${name}_h[i]); }`,
        ]
      : [];
    if (vec4Name)
      lines.push(
        `${binding} var<storage, read> ${name}_h4: array<vec4<f16>>;`,
        `fn load_${vec4Name}(i: u32) -> vec4<f32> { return vec4<f32>(${name}_h4[i]); }`,
      );
    return lines.join('\n');
  }
  const lines = [`${binding} var<storage, read> ${name}_h: array<u32>; // two halves of ${name} per word, low first`];
  if (codec === 'bf16') {
    if (scalar)
      lines.push(
        `fn ${load}(i: u32) -> f32 {`,
        `  let w = ${name}_h[i >> 1u];`,
        `  return bitcast<f32>(select(w << 16u, w & 0xffff0000u, (i & 1u) == 1u));`,
        `}`,
      );
    if (vec4Name)
      lines.push(
        `fn load_${vec4Name}(i: u32) -> vec4<f32> {`,
        `  let w0 = ${name}_h[2u * i];`,
        `  let w1 = ${name}_h[2u * i + 1u];`,
        `  return bitcast<vec4<f32>>(vec4<u32>(w0 << 16u, w0 & 0xffff0000u, w1 << 16u, w1 & 0xffff0000u));`,
        `}`,
      );
  } else {
    if (scalar) lines.push(`fn ${load}(i: u32) -> f32 { return unpack2x16float(${name}_h[i >> 1u])[i & 1u]; }`);
    if (vec4Name)
      lines.push(
        `fn load_${vec4Name}(i: u32) -> vec4<f32> {`,
        `  return vec4<f32>(unpack2x16float(${name}_h[2u * i]), unpack2x16float(${name}_h[2u * i + 1u]));`,
        `}`,
      );
  }
  return lines.join('\n');
}

/** Every `name[expr]` in `text` (not in comments) replaced by `fn(expr)`; brackets inside expr are balanced. */
function replaceIndexing(text: string, name: string, fn: string): string {
  const re = new RegExp(`(?<![A-Za-z0-9_])${name}\\[`, 'g');
  return text
    .split('\n')
    .map((line) => {
      const cut = line.indexOf('//');
      let code = cut >= 0 ? line.slice(0, cut) : line;
      const comment = cut >= 0 ? line.slice(cut) : '';
      for (let m = re.exec(code); m; m = re.exec(code)) {
        const open = m.index + m[0].length;
        let depth = 1;
        let j = open;
        for (; j < code.length && depth > 0; j++) {
          if (code[j] === '[') depth++;
          else if (code[j] === ']') depth--;
        }
        if (depth !== 0) throw new Error(`half operand: unbalanced ${name}[ in "${line.trim()}"`);
        code = `${code.slice(0, m.index)}${fn}(${code.slice(open, j - 1)})${code.slice(j)}`;
        re.lastIndex = 0;
      }
      return code + comment;
    })
    .join('\n');
}

/**
 * `source` with the storage array `name` (declared `var<storage, read> name: array<f32>;`) read from half storage
 * through `codec`; `vec4Name` is its vec4 view at the same binding (`array<vec4<f32>>`), if the kernel has one.
 * Throws when the declarations are not found, so a renamed binding cannot silently keep the f32 read.
 */
export function withHalfOperand(source: string, name: string, codec: HalfCodec, vec4Name?: string): string {
  const decl = (n: string, type: string) =>
    new RegExp(`^(@group\\(\\d+\\) @binding\\(\\d+\\)) var<storage, read> ${n}: ${type};.*$`, 'm');
  const scalar = decl(name, 'array<f32>').exec(source);
  if (!scalar) throw new Error(`half operand: no "var<storage, read> ${name}: array<f32>" in the kernel`);
  let text = source.replace(scalar[0], loaders(name, codec, scalar[1], vec4Name ?? null));
  if (vec4Name) {
    const v = decl(vec4Name, 'array<vec4<f32>>').exec(text);
    if (!v) throw new Error(`half operand: no "var<storage, read> ${vec4Name}: array<vec4<f32>>" in the kernel`);
    if (v[1] !== scalar[1]) throw new Error(`half operand: ${name} and ${vec4Name} are bound at different slots`);
    text = text.replace(v[0], `// ${vec4Name}: read through load_${vec4Name}`);
    text = replaceIndexing(text, vec4Name, `load_${vec4Name}`);
  }
  text = replaceIndexing(text, name, `load_${name}`); // the loaders index ${name}_h, which this leaves alone
  return codec === 'f16-native' ? `enable f16;\n${text}` : text;
}

/**
 * `source` with the storage array `name` that the kernel reads only as vec4s (declared `var<storage, read> name:
 * array<vec4<f32>>;`) read from half storage through `codec`, each vec4 four consecutive elements. Throws when the
 * declaration is not found.
 */
export function withHalfVec4Operand(source: string, name: string, codec: HalfCodec): string {
  const v = new RegExp(
    `^(@group\\(\\d+\\) @binding\\(\\d+\\)) var<storage, read> ${name}: array<vec4<f32>>;.*$`,
    'm',
  ).exec(source);
  if (!v) throw new Error(`half operand: no "var<storage, read> ${name}: array<vec4<f32>>" in the kernel`);
  const text = replaceIndexing(source.replace(v[0], loaders(name, codec, v[1], name, false)), name, `load_${name}`);
  return codec === 'f16-native' ? `enable f16;\n${text}` : text;
}
