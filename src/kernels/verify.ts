// The kernel verification rig: a case runs one WGSL kernel on random inputs and compares every output with
// the CPU twin's. Shared by Vitest (Node, Dawn), the browser self-test page and the CLI selftest.

import type { GpuContext, Recorder, Tensor } from '../gpu';
import { compareArrays, type Tolerance } from '../reference/compare';
import { Rng } from '../core/random';
import { host, numel, type HostTensor } from '../core/host-tensor';

export interface CaseResult {
  name: string;
  family: string;
  pass: boolean;
  /** "max abs 1.2e-07, max rel 3.0e-07 over 1105" per output, plus the first mismatches on failure. */
  summary: string;
  maxAbsError: number;
  /** Wall time of the GPU phase: submit, completion and readback. */
  ms: number;
}

export interface KernelCase {
  name: string;
  family: string;
  run(ctx: GpuContext): Promise<CaseResult>;
}

/** A host-side input: float data (a HostTensor) or integer data such as token ids. */
export type HostInput = HostTensor<Float32Array> | { data: Uint32Array; shape: readonly number[] };

export interface GpuTwinCase {
  name: string;
  family: string;
  /** Builds the inputs from a seeded RNG (the seed comes from the case name). */
  inputs(rng: Rng): HostInput[];
  /** Output shapes; `random` outputs start from random values (for kernels that accumulate). */
  outputs: { shape: readonly number[]; random?: boolean }[];
  /** Records the kernel(s): outputs first, then inputs, as the twin takes them. */
  gpu(rec: Recorder, outs: Tensor[], ins: Tensor[]): void;
  /** The CPU twin on the same data. Inputs are copies: a twin that writes into them does not affect the GPU's. */
  twin(outs: HostTensor<Float32Array>[], ins: HostInput[]): void;
  /** One tolerance for every output, or one per output. */
  tol: Tolerance | Tolerance[];
  /** Indices of outputs not to compare (scratch buffers). */
  skipOutputs?: number[];
}

/** Stable seed from a case name, so each case sees the same random data everywhere. */
export function seedOf(name: string): number {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Uniform values in [-scale, scale], nudged away from exact zeros so no case passes on zeros. */
export function randomHost(rng: Rng, shape: readonly number[], scale = 1): HostTensor<Float32Array> {
  const data = new Float32Array(numel(shape));
  for (let i = 0; i < data.length; i++) data[i] = rng.uniform(-scale, scale) || scale * 1e-3;
  return host(data, shape);
}

/** Random integers in [0, n), e.g. token ids. */
export function randomInts(
  rng: Rng,
  shape: readonly number[],
  n: number,
): { data: Uint32Array; shape: readonly number[] } {
  const data = new Uint32Array(numel(shape));
  for (let i = 0; i < data.length; i++) data[i] = rng.int(n);
  return { data, shape };
}

function copyInput(x: HostInput): HostInput {
  return x.data instanceof Uint32Array
    ? { data: x.data.slice(), shape: x.shape }
    : host((x.data as Float32Array).slice(), x.shape);
}

/** Builds a case that runs `gpu` and `twin` on the same random inputs and compares all outputs. */
export function gpuTwinCase(spec: GpuTwinCase): KernelCase {
  return {
    name: spec.name,
    family: spec.family,
    async run(ctx) {
      const rng = new Rng(seedOf(spec.name));
      const inputs = spec.inputs(rng);
      const outs = spec.outputs.map((o) =>
        o.random ? randomHost(rng, o.shape) : host(new Float32Array(numel(o.shape)), o.shape),
      );
      const gIn = inputs.map((h, i) =>
        h.data instanceof Uint32Array
          ? ctx.fromArray<'u32'>(h.data, h.shape, { dtype: 'u32', label: `${spec.name}:in${i}` })
          : ctx.fromArray(h.data as Float32Array, h.shape, { label: `${spec.name}:in${i}` }),
      );
      const gOut = outs.map((h, i) => ctx.fromArray(h.data, h.shape, { label: `${spec.name}:out${i}` }));
      const tols = outs.map((_, i) => (Array.isArray(spec.tol) ? spec.tol[i] : spec.tol));
      const magnitudes = tols.some((t) => t.sumTerms !== undefined) ? twinMagnitudes(spec, outs, inputs) : undefined;
      const t0 = performance.now();
      const rec = ctx.recorder(spec.name);
      spec.gpu(rec, gOut, gIn);
      rec.submit();
      const got = await ctx.readMany(gOut);
      const ms = performance.now() - t0;
      for (const t of [...gIn, ...gOut]) t.destroy();
      spec.twin(outs, inputs.map(copyInput));
      let pass = true;
      let maxAbsError = 0;
      const parts: string[] = [];
      outs.forEach((want, i) => {
        if (spec.skipOutputs?.includes(i)) return;
        const c = compareArrays(got[i], want.data, tols[i], magnitudes?.[i]);
        pass &&= c.pass;
        maxAbsError = Math.max(maxAbsError, c.maxAbsError);
        parts.push(outs.length > 1 ? `out${i}: ${c.summary}` : c.summary);
      });
      return { name: spec.name, family: spec.family, pass, summary: parts.join('; '), maxAbsError, ms };
    },
  };
}

/**
 * Σ|terms| per output element, for tolerances with sumTerms: the twin run on the absolute values of the inputs
 * and of the starting outputs (an accumulating kernel adds its start). Exact for sums and products of inputs
 * (reductions, matmuls), the computations sumTerms is meant for. Integer inputs (ids) are passed as they are.
 */
function twinMagnitudes(spec: GpuTwinCase, outs: HostTensor<Float32Array>[], inputs: HostInput[]): Float32Array[] {
  const abs = (h: HostTensor<Float32Array>) => host(h.data.map(Math.abs), h.shape);
  const absOuts = outs.map(abs);
  spec.twin(
    absOuts,
    inputs.map((x) => (x.data instanceof Uint32Array ? copyInput(x) : abs(x as HostTensor<Float32Array>))),
  );
  return absOuts.map((o) => o.data);
}

/** The common case of one output and float inputs of given shapes and scales. */
export function simpleCase(spec: {
  name: string;
  family: string;
  out: readonly number[];
  inputs: { shape: readonly number[]; scale?: number }[];
  randomOutput?: boolean;
  /** Rewrites the random inputs before upload (e.g. turns x into y = forward(x) for a backward case). */
  prepare?(inputs: HostTensor<Float32Array>[]): void;
  gpu(rec: Recorder, out: Tensor, ...inputs: Tensor[]): void;
  twin(out: HostTensor, ...inputs: HostTensor[]): void;
  tol: Tolerance;
}): KernelCase {
  return gpuTwinCase({
    name: spec.name,
    family: spec.family,
    inputs: (rng) => {
      const ins = spec.inputs.map((s) => randomHost(rng, s.shape, s.scale ?? 1));
      spec.prepare?.(ins);
      return ins;
    },
    outputs: [{ shape: spec.out, random: spec.randomOutput }],
    gpu: (rec, [out], ins) => spec.gpu(rec, out, ...ins),
    twin: ([out], ins) => spec.twin(out, ...(ins as HostTensor[])),
    tol: spec.tol,
  });
}

/** Runs cases one after another; `onResult` sees each result as it arrives (for live UIs). */
export async function runKernelCases(
  ctx: GpuContext,
  cases: readonly KernelCase[],
  onResult?: (r: CaseResult) => void,
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const c of cases) {
    let r: CaseResult;
    try {
      r = await c.run(ctx);
    } catch (e) {
      r = {
        name: c.name,
        family: c.family,
        pass: false,
        summary: `threw: ${(e as Error).message}`,
        maxAbsError: NaN,
        ms: 0,
      };
    }
    results.push(r);
    onResult?.(r);
  }
  return results;
}
