// The typed message protocol between the page and the engine worker. Every message the two sides exchange is
// listed here; both switch statements are exhaustive over these unions, so adding a message is a type error
// until both sides handle it.

import type { AdapterReport } from '../gpu/adapter';
import type { CaseResult } from '../kernels/verify';

/** Page -> worker. */
export type Request =
  | { type: 'init' }
  | { type: 'selftest'; /** Only cases whose name contains this text (all when empty). */ filter?: string };

/** Worker -> page. */
export type Response =
  | { type: 'ready'; report: AdapterReport }
  | { type: 'unavailable'; message: string }
  | { type: 'selftest-case'; result: CaseResult; index: number; total: number }
  | { type: 'selftest-done'; passed: number; failed: number; ms: number }
  /** An asynchronous GPU problem (device loss, uncaptured validation error) or a failed request. */
  | { type: 'error'; message: string; fatal: boolean };

/** Exhaustiveness guard for switch statements over the unions above. */
export function assertNever(x: never): never {
  throw new Error(`unhandled message: ${JSON.stringify(x)}`);
}
