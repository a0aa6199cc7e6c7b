// Dawn's waits in Node: native callbacks spin for the first SPIN_MS of a wait, then back off; JS callbacks never.

import { describe, expect, it } from 'vitest';
import { SPIN_MS, backedOffScheduler } from './dawn-polling';

describe('backedOffScheduler', () => {
  const setup = () => {
    let clock = 0;
    const calls: string[] = [];
    const schedule = backedOffScheduler(
      () => calls.push('immediate'),
      () => calls.push('later'),
      () => clock,
    );
    return { schedule, calls, advance: (ms: number) => (clock += ms) };
  };
  const native = Math.max.bind(null) as unknown as () => void; // a bound function reads as native code

  it('runs a wait at once for its first SPIN_MS, then a millisecond apart, and a new wait at once again', () => {
    const { schedule, calls, advance } = setup();
    schedule(native);
    advance(SPIN_MS / 2);
    schedule(native);
    advance(SPIN_MS);
    schedule(native); // past the spin
    advance(1);
    schedule(native); // still the same wait (ticks a millisecond apart)
    advance(50); // idle: the next tick starts a new wait
    schedule(native);
    expect(calls).toEqual(['immediate', 'immediate', 'later', 'later', 'immediate']);
  });

  it('never delays a JavaScript callback', () => {
    const { schedule, calls, advance } = setup();
    schedule(native);
    advance(2 * SPIN_MS); // the same wait, past its spin
    schedule(native);
    schedule(() => {});
    expect(calls).toEqual(['immediate', 'later', 'immediate']);
  });
});
