// A reward function the person writes (the config's `reward_fn`): JavaScript of the form
// `(prompt, completion, item) => number | { reward, parts }`, the contract its sandboxes share, the program text
// they run (one runner for the browser's Blob worker and Node's worker thread), and the messages of what can go
// wrong. The sandboxes themselves (a dedicated Worker in the engine worker, a worker_threads thread in Node) live
// in src/worker/reward-sandbox.ts and src/cli/reward-sandbox.ts. Not a task verifier (src/tasks/).

import type { TaskItem } from '../tasks';

/** The reward function's name among the run's reward functions: reward_weights.user, rewards/user/mean. */
export const USER_REWARD_NAME = 'user';

/** How long one batch of completions may take in the sandbox before it is stopped (an endless loop, say). */
export const USER_REWARD_TIME_LIMIT_MS = 5_000;

/** The file name the user's code has in stack traces and syntax errors of the Node sandbox. */
export const USER_REWARD_FILE = 'reward_fn.js';

/** One completion the function is called on. */
export interface UserRewardInput {
  prompt: string;
  completion: string;
  item: TaskItem;
}

/** What the function returned for one completion, checked: a finite reward and finite named parts. */
export interface UserRewardScore {
  reward: number;
  parts: Record<string, number>;
}

/** A running reward function: scores one batch at a time (the calls are awaited one after another). */
export interface UserRewardFunction {
  /** The scores of `batch`, in order. Rejects with UserRewardError when the function fails or runs too long. */
  score(batch: readonly UserRewardInput[]): Promise<UserRewardScore[]>;
  /** Stops the sandbox; a later score() starts a new one. */
  destroy(): void;
}

/** Starts a sandbox for `source` (the browser's and Node's implementations of this signature). */
export type UserRewardSandbox = (source: string, options?: { timeLimitMs?: number }) => UserRewardFunction;

/**
 * The reward function failed: it does not compile, threw, returned something that is not a reward, or ran past
 * the time limit. The message says which, with the line or the completion, and is meant for the person.
 */
export class UserRewardError extends Error {
  override name = 'UserRewardError';
}

/**
 * Globals removed from the browser sandbox's scope (own properties and every prototype's) before the user's code
 * runs: every way out to the network, the lab's storage, other tabs or more workers.
 */
export const BLOCKED_GLOBALS = [
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'WebSocketStream',
  'WebTransport',
  'EventSource',
  'importScripts',
  'indexedDB',
  'caches',
  'BroadcastChannel',
  'Worker',
  'SharedWorker',
  'navigator',
  'requestFileSystem',
  'webkitRequestFileSystem',
  'webkitResolveLocalFileSystemURL',
] as const;

/** What the runner inside a sandbox answers for a batch (as JSON text). */
export type RunnerReply =
  | { ok: true; scores: UserRewardScore[] }
  | { ok: false; kind: 'threw' | 'value'; index: number; message: string; line: number | null }
  | { ok: false; kind: 'setup'; index: -1; message: string; line: null };

/** The user's source as the runner embeds it: trailing semicolons and blank space dropped, so it is one expression. */
function asExpression(source: string): string {
  return source.replace(/[\s;]+$/, '');
}

/**
 * The runner: an expression whose value is `run(batchJson) -> replyJson`. It captures the builtins it needs
 * before the user's expression is evaluated (so the user's code cannot replace them under it), calls the function
 * once per completion, and checks every return value. Data crosses in and out as JSON text only, so no object of
 * the host ever reaches the user's code. `fileExpr` is an expression for the script's name in stack traces.
 * Returns the text (with __FIRST_LINE__ for placeRunner to fill in) and the line the user's source starts on,
 * counted from the text's first line (1-based).
 */
function runnerExpression(source: string, fileExpr: string): { text: string; firstLine: number } {
  const head = `(function () {
  const parse = JSON.parse, stringify = JSON.stringify, isFinite = Number.isFinite, keys = Object.keys, isArray = Array.isArray;
  const FILE = ${fileExpr};
  const FIRST_LINE = __FIRST_LINE__;
  const describe = (v) =>
    typeof v === 'string' ? 'the string ' + stringify(v.length > 40 ? v.slice(0, 40) + '...' : v)
    : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v === undefined ? String(v)
    : v === null ? 'null'
    : typeof v === 'function' ? 'a function'
    : isArray(v) ? 'an array'
    : typeof v === 'object' ? 'an object'
    : typeof v;
  const userLine = (e) => {
    const stack = String((e && e.stack) || '');
    let at = 0;
    for (;;) {
      const i = stack.indexOf(FILE + ':', at);
      if (i < 0) return null;
      const m = /^:(\\d+)/.exec(stack.slice(i + FILE.length));
      if (m) {
        const line = Number(m[1]) - FIRST_LINE + 1;
        if (line >= 1) return line;
      }
      at = i + 1;
    }
  };
  const errorText = (e) => (e && typeof e === 'object' && typeof e.message === 'string' ? (e.name ? e.name + ': ' : '') + e.message : 'threw ' + describe(e));
  const fn = (
`;
  const tail = `
  );
  return function run(batchJson) {
    if (typeof fn !== 'function') return stringify({ ok: false, kind: 'setup', index: -1, message: 'reward_fn must be a function (prompt, completion, item) => number, but its value is ' + describe(fn), line: null });
    const batch = parse(batchJson);
    const scores = [];
    for (let i = 0; i < batch.length; i++) {
      const b = batch[i];
      const bad = (what) => stringify({ ok: false, kind: 'value', index: i, message: what, line: null });
      let v;
      try {
        v = fn(b.prompt, b.completion, b.item);
      } catch (e) {
        return stringify({ ok: false, kind: 'threw', index: i, message: errorText(e), line: userLine(e) });
      }
      if (typeof v === 'number') {
        if (!isFinite(v)) return bad(describe(v));
        scores.push({ reward: v, parts: {} });
        continue;
      }
      if (v === null || typeof v !== 'object' || isArray(v)) return bad(describe(v));
      if (typeof v.then === 'function') return bad('a Promise (the function must return its reward synchronously)');
      if (typeof v.reward !== 'number' || !isFinite(v.reward)) return bad('an object whose reward is ' + describe(v.reward));
      const parts = {};
      if (v.parts !== undefined) {
        if (v.parts === null || typeof v.parts !== 'object' || isArray(v.parts)) return bad('an object whose parts are ' + describe(v.parts));
        for (const k of keys(v.parts)) {
          const p = v.parts[k];
          if (typeof p !== 'number' || !isFinite(p)) return bad('an object whose parts.' + k + ' is ' + describe(p));
          parts[k] = p;
        }
      }
      scores.push({ reward: v.reward, parts });
    }
    return stringify({ ok: true, scores });
  };
})()`;
  const firstLine = head.split('\n').length;
  return { text: head + asExpression(source) + tail, firstLine };
}

/** Fixes the runner's own notion of where the user's source starts, once the program around it is known. */
function placeRunner(
  before: string,
  runner: { text: string; firstLine: number },
  after: string,
): { text: string; firstLine: number } {
  const firstLine = before.split('\n').length - 1 + runner.firstLine;
  return { text: before + runner.text.replace('__FIRST_LINE__', String(firstLine)) + after, firstLine };
}

/**
 * The browser sandbox's whole script: remove BLOCKED_GLOBALS (own and inherited), then define the runner and
 * answer each message (a batch as JSON text) with its reply. No eval: the user's code is part of the script, so
 * the page's CSP (no 'unsafe-eval') holds, and a syntax error is the script's own, reported with its line.
 */
export function browserSandboxScript(source: string): { text: string; firstLine: number } {
  const before = `"use strict";
(function () {
  for (const name of ${JSON.stringify(BLOCKED_GLOBALS)}) {
    for (let o = self; o; o = Object.getPrototypeOf(o)) {
      try { delete o[name]; } catch (e) { /* not configurable: shadowed below */ }
    }
    try { Object.defineProperty(self, name, { value: undefined, writable: false, configurable: false }); } catch (e) { /* already gone */ }
  }
})();
const run = `;
  const after = `;
self.onmessage = (e) => { self.postMessage(run(e.data)); };
`;
  return placeRunner(before, runnerExpression(source, 'self.location.href'), after);
}

/**
 * The Node sandbox's program, run by vm in a fresh context (ECMAScript builtins only: no require, process,
 * fetch or timers) inside a worker thread; its value is the runner.
 */
export function nodeSandboxProgram(source: string): { text: string; firstLine: number } {
  return placeRunner('"use strict";\n', runnerExpression(source, JSON.stringify(USER_REWARD_FILE)), '\n');
}

/** `s` quoted and cut for a message. */
function shown(s: string, max = 40): string {
  return JSON.stringify(s.length > max ? `${s.slice(0, max)}...` : s);
}

/** The scores of a runner's reply, or the UserRewardError it stands for (naming the completion and the line). */
export function scoresOfReply(replyJson: string, batch: readonly UserRewardInput[]): UserRewardScore[] {
  const reply = JSON.parse(replyJson) as RunnerReply;
  if (reply.ok) {
    if (reply.scores.length !== batch.length)
      throw new UserRewardError(
        `reward_fn: the sandbox answered ${reply.scores.length} scores for ${batch.length} completions`,
      );
    return reply.scores;
  }
  if (reply.kind === 'setup') throw new UserRewardError(reply.message);
  const which = `completion ${reply.index} (${shown(batch[reply.index]?.completion ?? '')}, prompt ${shown(batch[reply.index]?.item.prompt ?? '', 24)})`;
  if (reply.kind === 'threw')
    throw new UserRewardError(
      `reward_fn threw ${reply.line !== null ? `at line ${reply.line} ` : ''}on ${which}: ${reply.message}`,
    );
  throw new UserRewardError(
    `reward_fn returned ${reply.message} for ${which}; it must return a finite number or { reward: number, parts?: { name: number } }`,
  );
}

/** The error of a reward function that does not compile, with the line in the user's source when known. */
export function compileError(message: string, line: number | null): UserRewardError {
  return new UserRewardError(
    `reward_fn does not compile${line !== null && line >= 1 ? ` (line ${line})` : ''}: ${message}`,
  );
}

/** The error of a batch that ran past the time limit; the sandbox was stopped. */
export function timeLimitError(completions: number, limitMs: number): UserRewardError {
  return new UserRewardError(
    `reward_fn did not finish a batch of ${completions} completions within ${limitMs / 1000} s (an endless loop?), so its sandbox was stopped`,
  );
}
