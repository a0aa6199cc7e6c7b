// Spreads expensive renders (the charts) over separate tasks: each queued job runs in its own macrotask and is
// flushed synchronously there, so twenty charts updating after a batch of metrics become twenty short tasks
// instead of one long one, and the page stays responsive. A key queued twice keeps only its latest job.
import { flushSync } from 'react-dom';
import { useEffect, useState } from 'react';

const queue = new Map<string, () => void>();
let scheduled = false;

function pump(): void {
  scheduled = false;
  const next = queue.entries().next();
  if (next.done) return;
  const [key, job] = next.value;
  queue.delete(key);
  const t0 = performance.now();
  flushSync(job);
  // A user-timing entry per job, so a slow chart shows up by name in a performance profile.
  performance.measure(`render ${key}`, { start: t0 });
  if (queue.size) schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setTimeout(pump, 0);
}

/** Runs `job` in a task of its own, after the jobs queued before it (replacing an earlier job of the same key). */
export function enqueueRender(key: string, job: () => void): void {
  queue.delete(key);
  queue.set(key, job);
  schedule();
}

/**
 * `value` as last adopted through the render queue (undefined until the first adoption), at most once per
 * `minIntervalMs` (a trailing adoption follows the last change). While `active` is false (the chart is off
 * screen) new values wait; they are adopted once it is active again.
 */
export function useStaggered<T>(key: string, value: T, active: boolean, minIntervalMs = 0): T | undefined {
  const [shown, setShown] = useState<{ v: T; at: number } | undefined>(undefined);
  useEffect(() => {
    if (!active || (shown && shown.v === value)) return;
    const wait = shown ? shown.at + minIntervalMs - performance.now() : 0;
    const adopt = () => enqueueRender(key, () => setShown({ v: value, at: performance.now() }));
    if (wait <= 0) {
      adopt();
      return;
    }
    const t = setTimeout(adopt, wait);
    return () => clearTimeout(t);
  }, [key, value, active, shown, minIntervalMs]);
  useEffect(() => () => void queue.delete(key), [key]);
  return shown?.v;
}

/** True while the element is within `margin` of the viewport. */
export function useNearViewport(ref: React.RefObject<Element | null>, margin = '300px'): boolean {
  const [near, setNear] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof IntersectionObserver === 'undefined') {
      setNear(true);
      return;
    }
    const io = new IntersectionObserver((entries) => setNear(entries.some((e) => e.isIntersecting)), {
      rootMargin: margin,
    });
    io.observe(el);
    return () => io.disconnect();
  }, [ref, margin]);
  return near;
}
