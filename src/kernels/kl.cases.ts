// GPU-vs-twin cases of the kl family (shaders/kl.wgsl against src/reference/kl.ts): forward, backward and
// backward with accumulate at awkward shapes (N = 1, 7, 33; V = 2, 37, 300, 50257, and the real vocabularies of
// rows.ts's REAL_VOCABS, 49,152 and 151,936, with 2-3 rows), temperatures 1 and 0.7,
// reference logits independent of the policy's or close to them (KL near 0), logits of magnitude 1e4, and both
// sides of every lane edge of rowLayout (V = 1023/1024, 4095/4096, 16383/16384) with a partial last workgroup.
// Logits of magnitude 1e4 run at tau = 1 only: with tau != 1, the f32 rounding of logits / tau (about 1e-3 at 1e4)
// moves a KL between two spread-out rows by more than any f32 tolerance against the f64 twin (the math, not the
// kernel: src/kernels/kl.test.ts checks the twin's stability at 1e4 for other temperatures).

import type { Rng } from '../core/random';
import * as ref from '../reference/kl';
import type { HostTensor } from '../core/host-tensor';
import { klExactBackward, klExactForward } from './kl';
import { REAL_VOCABS, rowEdgeShapes, rowLayout } from './rows';
import { gpuTwinCase, randomHost, type HostInput, type KernelCase } from './verify';

const f32In = (x: HostInput) => x as HostTensor<Float32Array>;

/** How refLogits relate to logits: independent draws, or the policy's logits plus noise of +-0.1 * scale. */
type RefKind = 'independent' | 'near';

/** logits then refLogits, (N,V) each, uniform in [-scale, scale]. */
function klInputs(rng: Rng, N: number, V: number, scale: number, kind: RefKind): HostTensor<Float32Array>[] {
  const logits = randomHost(rng, [N, V], scale);
  const refLogits = randomHost(rng, [N, V], scale);
  if (kind === 'near') {
    for (let i = 0; i < refLogits.data.length; i++) refLogits.data[i] = logits.data[i] + 0.1 * refLogits.data[i];
  }
  return [logits, refLogits];
}

interface KlConfig {
  N: number;
  V: number;
  tau: number;
  scale: number;
  kind: RefKind;
  edge?: boolean;
}

function klCaseSet({ N, V, tau, scale, kind, edge }: KlConfig): KernelCase[] {
  const { LANES } = rowLayout(V);
  const tag =
    `${N}x${V} tau=${tau}${scale >= 1e4 ? ' logits 1e4' : ''} ref ${kind}` +
    (edge ? ` (${LANES} lane${LANES > 1 ? 's' : ''} per row)` : '');
  const opts = { temperature: tau };
  const fwdTol = { atol: 2e-5, rtol: 1e-5 };
  const bwdTol = { atol: 2e-6, rtol: 1e-5 };
  return [
    gpuTwinCase({
      name: `klExactForward ${tag}`,
      family: 'kl',
      inputs: (rng) => klInputs(rng, N, V, scale, kind),
      outputs: [{ shape: [N], random: true }],
      gpu: (rec, [kl], [logits, refLogits]) => klExactForward(rec, kl, logits, refLogits, opts),
      twin: ([kl], [logits, refLogits]) => ref.klExactForward(kl, f32In(logits), f32In(refLogits), opts),
      tol: fwdTol,
    }),
    ...[false, true].map((accumulate) =>
      gpuTwinCase({
        name: `klExactBackward${accumulate ? ' accumulate' : ''} ${tag}`,
        family: 'kl',
        inputs: (rng) => [randomHost(rng, [N]), ...klInputs(rng, N, V, scale, kind)],
        outputs: [{ shape: [N, V], random: true }],
        gpu: (rec, [dl], [dKl, logits, refLogits]) =>
          klExactBackward(rec, dl, dKl, logits, refLogits, { ...opts, accumulate }),
        twin: ([dl], [dKl, logits, refLogits]) =>
          ref.klExactBackward(dl, f32In(dKl), f32In(logits), f32In(refLogits), { ...opts, accumulate }),
        tol: bwdTol,
      }),
    ),
  ];
}

/** Every kl case, in a stable order. */
export function klCases(): KernelCase[] {
  const configs: KlConfig[] = [
    ...(
      [
        [1, 2],
        [7, 37],
        [33, 300],
      ] as const
    ).flatMap(([N, V]) => [1, 0.7].map((tau): KlConfig => ({ N, V, tau, scale: 3, kind: 'independent' }))),
    { N: 7, V: 37, tau: 0.7, scale: 3, kind: 'near' },
    { N: 33, V: 300, tau: 1, scale: 3, kind: 'near' },
    { N: 7, V: 300, tau: 1, scale: 1e4, kind: 'independent' },
    { N: 7, V: 300, tau: 1, scale: 1e4, kind: 'near' },
    { N: 3, V: 50257, tau: 0.7, scale: 3, kind: 'independent' },
    { N: 2, V: REAL_VOCABS.smollm2, tau: 0.7, scale: 3, kind: 'independent' },
    { N: 3, V: REAL_VOCABS.qwen25, tau: 0.7, scale: 3, kind: 'independent' },
    { N: 2, V: REAL_VOCABS.qwen25, tau: 1, scale: 3, kind: 'near' },
    ...rowEdgeShapes().map(([N, V]): KlConfig => ({ N, V, tau: 0.7, scale: 3, kind: 'independent', edge: true })),
    { N: 17, V: 1024, tau: 1, scale: 1e4, kind: 'independent', edge: true },
  ];
  return configs.flatMap(klCaseSet);
}
