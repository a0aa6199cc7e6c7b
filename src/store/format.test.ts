// The page's number formats: tooltips keep four significant digits, axis ticks stay short, clock times and byte
// sizes read naturally, and benchmark cells keep the digits that matter.
import { describe, expect, it } from 'vitest';
import { clock, fmt, fmtMeasure, fmtTick, throughput } from './format';
import { formatBytes } from '../core/format';

describe('number formats', () => {
  it('keeps four significant digits in tooltips and short axis labels', () => {
    expect([fmt(0), fmt(0.123456), fmt(-2.5), fmt(3e-4), fmt(123456), fmt(NaN)]).toEqual([
      '0',
      '0.1235',
      '-2.5',
      '3.000e-4',
      '1.235e+5',
      'NaN',
    ]);
    expect([fmtTick(0), fmtTick(3e-4), fmtTick(0.25), fmtTick(1.23456), fmtTick(12345), fmtTick(-0.015)]).toEqual([
      '0',
      '3e-4',
      '0.25',
      '1.23',
      '12.3k',
      '-0.015',
    ]);
  });

  it('writes clock times, byte sizes, throughput and benchmark cells', () => {
    expect([clock(75_000), clock(3_725_000), clock(NaN), clock(-1)]).toEqual(['1:15', '1:02:05', '—', '—']);
    expect([
      formatBytes(2 ** 31),
      formatBytes(1.5 * 2 ** 30),
      formatBytes(256 * 2 ** 20),
      formatBytes(3.5 * 2 ** 20),
      formatBytes(16 * 1024),
    ]).toEqual(['2 GiB', '1.5 GiB', '256 MiB', '3.5 MiB', '16 KiB']);
    expect(throughput(1250, 42.54)).toBe('1.25 s/step · 42.5 tokens/s');
    expect(throughput(12_340, 1234.4)).toBe('12.3 s/step · 1234 tokens/s');
    expect([
      fmtMeasure(1234.5),
      fmtMeasure(123.45),
      fmtMeasure(1.2345),
      fmtMeasure(0.012345),
      fmtMeasure(undefined),
      fmtMeasure(0.5),
      fmtMeasure(0.5, 3),
    ]).toEqual(['1235', '123.5', '1.23', '0.0123', '', '0.500', '0.5000']);
  });
});
