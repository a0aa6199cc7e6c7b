// The rule that decides where a decode step runs the fused projections (projectionSumOrder): their sum order along K
// is the order of the matmul variant the trainer's forward runs for the same products, the products' rows never
// change that order, and every width the lab runs (the shipped checkpoints, the presets, real models) gets one.

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { headDim } from '../core/model-shapes';
import { configFromJson } from '../io/checkpoint';
import { REAL_CONFIG_FILES, realModelConfig, type RealModelName } from '../io/real-models.fixture';
import { MODEL_PRESETS, type ModelConfig } from '../schema/model-config';
import {
  MATMUL_VARIANTS,
  defaultMatmulVariant,
  defaultVariantFor,
  matmulSumOrder,
  setMatmulTuning,
  type MatmulVariant,
} from './matmul';
import { projectionSumOrder } from './projection';

/** A stand-in device: matmul's tunings are keyed by the device object only. */
const fakeDevice = () => ({}) as GPUDevice;

const checkpointsDir = new URL('../../public/checkpoints/', import.meta.url).pathname;

/** Every architecture the lab runs: the shipped checkpoints, the presets and the recorded real models. */
function labConfigs(): [string, ModelConfig][] {
  const shipped = readdirSync(checkpointsDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e): [string, ModelConfig] => [
      `checkpoint ${e.name}`,
      configFromJson(JSON.parse(readFileSync(`${checkpointsDir}${e.name}/config.json`, 'utf8'))).config,
    ]);
  const presets = Object.entries(MODEL_PRESETS).map(([n, c]): [string, ModelConfig] => [`preset ${n}`, c]);
  const real = (Object.keys(REAL_CONFIG_FILES) as RealModelName[]).map((n): [string, ModelConfig] => [
    n,
    realModelConfig(n).config,
  ]);
  return [...shipped, ...presets, ...real];
}

/** A decode step's three fused products of one layer: rows of width K into outputs of these widths. */
function layerProducts(c: ModelConfig) {
  const HD = headDim(c);
  return [
    { K: c.dModel, widths: [c.nHeads * HD, c.nKvHeads * HD] },
    { K: c.dModel, widths: [c.dFF] },
  ];
}

describe('matmulSumOrder', () => {
  it('vec4 and the register tiles sum 4 k per dot product; naive, blocked, strided and both tiled one k at a time', () => {
    const orders = Object.fromEntries(MATMUL_VARIANTS.map((v) => [v, matmulSumOrder(v)]));
    expect(orders).toEqual({
      naive: 'k1',
      blocked: 'k1',
      strided: 'k1',
      vec4: 'k4',
      wide: 'k4',
      tall: 'k4',
      square: 'k4',
      tiled: 'k1',
      tiled128: 'k1',
    });
  });
});

describe('projectionSumOrder', () => {
  const widths = new Set(labConfigs().flatMap(([, c]) => layerProducts(c).flatMap((p) => [p.K, ...p.widths])));
  it('the rows of an A*B^T product never change the order of the variant matmul() runs (K divisible by 4)', () => {
    // A decode step's rows stand for a training batch's: the order at M = 1 is the order at every M.
    const rows = [1, 2, 3, 4, 5, 8, 16, 17, 31, 32, 33, 64, 65, 127, 128, 129, 256, 1000, 4096, 65_536];
    for (const tuned of MATMUL_VARIANTS)
      for (const K of [4, 36, ...widths].filter((k) => k % 4 === 0))
        for (const N of [4, 8, 12, 20, 24, ...widths]) {
          const order = (M: number) => matmulSumOrder(defaultVariantFor(tuned, { M, N, K, transB: true }));
          for (const M of rows) expect(order(M), `${tuned} M=${M} N=${N} K=${K}`).toBe(order(1));
        }
  });

  it("is the order of the variant matmul() runs when none is named: the device's tuned one, else blocked", () => {
    const device = fakeDevice();
    expect(projectionSumOrder(device, 48, [48, 24])).toBe('k1');
    const cases: [MatmulVariant, 'k1' | 'k4'][] = [
      ['blocked', 'k1'],
      ['strided', 'k1'],
      ['tiled', 'k1'],
      ['tiled128', 'k1'],
      ['vec4', 'k4'],
      ['wide', 'k4'],
      ['tall', 'k4'],
      ['square', 'k4'],
    ];
    for (const [variant, order] of cases) {
      setMatmulTuning(device, { NT: variant, NN: 'blocked', TN: 'blocked' });
      for (const [K, N] of [
        [48, 24],
        [576, 1536],
        [896, 128],
      ]) {
        expect(projectionSumOrder(device, K, [N]), `${variant} K=${K} N=${N}`).toBe(order);
        expect(matmulSumOrder(defaultMatmulVariant(device, { M: 512, N, K, transB: true }))).toBe(order);
      }
    }
    setMatmulTuning(device, null);
  });

  it('is null where the fused kernels cannot take the widths (the products then stay apart)', () => {
    const device = fakeDevice();
    expect(projectionSumOrder(device, 46, [48, 24])).toBeNull();
    expect(projectionSumOrder(device, 48, [48, 26])).toBeNull();
    expect(projectionSumOrder(device, 48, [0])).toBeNull();
  });

  it('gives every layer product of every architecture the lab runs an order, however matmul is tuned', () => {
    const configs = labConfigs();
    expect(configs.some(([n]) => n === 'checkpoint copy')).toBe(true);
    for (const tuned of [undefined, ...MATMUL_VARIANTS.filter((v) => v !== 'naive')]) {
      const device = fakeDevice();
      if (tuned) setMatmulTuning(device, { NT: tuned });
      for (const [name, c] of configs)
        for (const p of layerProducts(c)) {
          const want = matmulSumOrder(defaultMatmulVariant(device, { M: 256, N: p.widths[0], K: p.K, transB: true }));
          expect(projectionSumOrder(device, p.K, p.widths), `${name} ${tuned ?? 'untuned'} K=${p.K}`).toBe(want);
        }
    }
  });
});
