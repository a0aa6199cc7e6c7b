// The step estimate takes one method before and after the adapter probe (issue 39, finding 9): every estimate's
// figures are the probe's, the probe runs once, and no estimate is made from other figures while it can still run.
import { describe, expect, it } from 'vitest';
import { assumedThroughput, estimateStepSeconds, stepWork, type Throughput } from '../schema/step-estimate';
import { resolveConfig } from '../schema/config';
import { MODEL_PRESETS } from '../schema/model-config';
import { AdapterFigures } from './adapter-figures';

const PROBED: Throughput = {
  flopsPerSecond: 2.6e8,
  bytesPerSecond: 6e7,
  submitSeconds: 2.7e-3,
  dispatchSeconds: 2.2e-4,
  source: 'measured on this adapter',
};

describe('AdapterFigures', () => {
  it('gives every estimate the figures of one probe, before a run and after it', async () => {
    let probes = 0;
    let idle = true;
    const figures = new AdapterFigures(
      async () => {
        probes++;
        return PROBED;
      },
      () => assumedThroughput(true),
      () => idle,
    );
    const work = stepWork(resolveConfig('grpo', {}), MODEL_PRESETS.nano);
    const before = await figures.figures();
    idle = false; // a run trains
    const during = await figures.figures();
    idle = true; // and ends
    const after = await figures.figures();
    expect(probes).toBe(1);
    for (const f of [before, during, after]) {
      expect('throughput' in f && f.throughput).toBe(PROBED);
      if ('throughput' in f)
        expect(estimateStepSeconds(work, f.throughput).seconds).toBe(estimateStepSeconds(work, PROBED).seconds);
    }
  });

  it('makes no estimate from other figures while the probe can still run: it says it waits', async () => {
    const figures = new AdapterFigures(
      async () => PROBED,
      () => assumedThroughput(true),
      () => false,
    );
    const f = await figures.figures();
    expect('waiting' in f && f.waiting).toMatch(/measured once the device is idle/);
  });

  it('falls back to the kind figures only when the probe fails, and says why', async () => {
    const figures = new AdapterFigures(
      async () => {
        throw new Error('device lost');
      },
      () => assumedThroughput(true),
      () => true,
    );
    const f = await figures.figures();
    expect('throughput' in f && f.throughput.source).toMatch(/the probe failed: device lost/);
  });
});
