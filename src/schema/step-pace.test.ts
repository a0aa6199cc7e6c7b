// The status line's pace: the median of the recent steps, the first step of a session (compiles) left out.
import { describe, expect, it } from 'vitest';
import { PACE_WINDOW, stepPace, timeLeftMs } from './step-pace';

describe('stepPace', () => {
  it('gives no pace while the only step is the first of its session (it includes the compiles)', () => {
    expect(stepPace([], true)).toBe(0);
    expect(stepPace([16_900], true)).toBe(0);
  });

  it('leaves the first step of a session out once a later step exists', () => {
    // The issue's run: step 1 took 16.9 s (compiles), the next ones 0.7 s; the pace is the later steps', not a mean.
    expect(stepPace([16_900, 700], true)).toBe(700);
    expect(stepPace([16_900, 700, 800, 900], true)).toBe(800);
  });

  it('keeps the oldest step when it is not the first of the session', () => {
    expect(stepPace([16_900, 700], false)).toBe((16_900 + 700) / 2);
  });

  it('is the median of the last PACE_WINDOW steps, so one slow step does not move it', () => {
    const times = [5000, 5000, 5000, ...Array.from({ length: PACE_WINDOW }, (_, i) => 1000 + i * 10)];
    times[times.length - 2] = 9000; // one stall among the recent steps
    const pace = stepPace(times, false);
    expect(pace).toBeGreaterThanOrEqual(1000);
    expect(pace).toBeLessThan(1100);
  });

  it('takes the mean of the two middle steps of an even count, and skips times that are not numbers', () => {
    expect(stepPace([100, 300, Number.NaN, 200, 400], false)).toBe(250);
  });
});

describe('timeLeftMs', () => {
  it('is steps left times the pace, NaN when the pace is unknown', () => {
    expect(timeLeftMs(700, 100)).toBe(70_000);
    expect(timeLeftMs(700, -3)).toBe(0);
    expect(timeLeftMs(0, 100)).toBeNaN();
  });
});
