// CPU twins of shaders/elementwise.wgsl: flat operations over equally sized tensors.

import type { HostTensor } from '../core/host-tensor';

function sameSize(what: string, out: HostTensor, ...ins: HostTensor[]): void {
  for (const t of ins) {
    if (t.data.length !== out.data.length) {
      throw new Error(`${what}: operand has ${t.data.length} elements, output has ${out.data.length}`);
    }
  }
}

/** out = a + b */
export function add(out: HostTensor, a: HostTensor, b: HostTensor): void {
  sameSize('add', out, a, b);
  for (let i = 0; i < out.data.length; i++) out.data[i] = a.data[i] + b.data[i];
}

/** out = alpha * a */
export function scale(out: HostTensor, a: HostTensor, alpha: number): void {
  sameSize('scale', out, a);
  for (let i = 0; i < out.data.length; i++) out.data[i] = alpha * a.data[i];
}

/** out = value */
export function fill(out: HostTensor, value: number): void {
  out.data.fill(value);
}

/** out = a */
export function copy(out: HostTensor, a: HostTensor): void {
  sameSize('copy', out, a);
  out.data.set(a.data);
}
