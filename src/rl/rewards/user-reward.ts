// A reward function the person writes (the config's `reward_fn`): JavaScript of the form
// `(prompt, completion, item) => number | { reward, parts }`, the contract its sandboxes share, the two scripts
// they run (the runner, fixed text, and the person's script, parsed on its own after the runner has locked the
// scope down), the host's check of every reply, and the messages of what can go wrong. The sandboxes themselves (a
// Blob worker the page starts, a worker_threads thread with a vm context in Node) live in
// src/worker/reward-sandbox.ts and src/cli/reward-sandbox.ts. Not a task verifier (src/tasks/).

import type { TaskItem } from '../../tasks';

/** How long one batch of completions may take in the sandbox before it is stopped (an endless loop, say). */
export const USER_REWARD_TIME_LIMIT_MS = 5_000;

/**
 * How long a sandbox may take to start: the thread or worker, the runner, and the person's script run once to
 * define the function (an endless loop there is stopped here). Batches are timed from when it is ready.
 */
export const USER_REWARD_START_LIMIT_MS = 30_000;

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
export type UserRewardSandbox = (source: string, options?: UserRewardSandboxOptions) => UserRewardFunction;

/** A sandbox's limits (tests lower them). */
export interface UserRewardSandboxOptions {
  /** How long one batch may take (USER_REWARD_TIME_LIMIT_MS). */
  timeLimitMs?: number;
  /** How long the sandbox may take to start (USER_REWARD_START_LIMIT_MS). */
  startLimitMs?: number;
  /** Node's sandbox thread's JavaScript heap, in MB (USER_REWARD_HEAP_LIMIT_MB); the browser cannot bound it. */
  heapLimitMb?: number;
  /** The most bytes the function may hold in ArrayBuffers and typed arrays (USER_REWARD_BUFFER_LIMIT_BYTES). */
  bufferLimitBytes?: number;
}

/**
 * The reward function failed: it does not compile, threw, returned something that is not a reward, or ran past
 * the time limit. The message says which, with the line or the completion, and is meant for the person.
 */
export class UserRewardError extends Error {
  override name = 'UserRewardError';
  /** Where in the person's source it failed (a compile error), when known: line and column from 1. */
  readonly at: SourcePosition | null;
  constructor(message: string, at: SourcePosition | null = null) {
    super(message);
    this.at = at;
  }
}

/** A place in the person's reward_fn: its line and column (from 1; column null when the sandbox did not say). */
export interface SourcePosition {
  line: number;
  column: number | null;
  /** The place is past the function's last character (it ends early: a missing operand, bracket or brace). */
  atEnd: boolean;
}

/**
 * A place the sandbox reported, as a place in the person's own source. `line` is already counted from the source's
 * first line (functionScript's wrapper line taken off); a line past the source's last is the wrapper's closing
 * parenthesis, which the parser reached because the function ended early: that is the end of the person's last
 * line. `column` counts in the script's line, which is the person's line as written. Null when the line is not in
 * the source (before it, or not a number).
 */
export function sourcePosition(
  source: string,
  line: number | null,
  column: number | null = null,
): SourcePosition | null {
  if (line === null || !Number.isInteger(line) || line < 1) return null;
  const lines = source.replace(/[\s;]+$/, '').split('\n');
  const col = column !== null && Number.isInteger(column) && column >= 1 ? column : null;
  if (line > lines.length) return { line: lines.length, column: lines[lines.length - 1].length + 1, atEnd: true };
  return { line, column: col, atEnd: false };
}

/** The most named parts one return value may carry (`{ reward, parts }`), and the longest name of one. */
export const USER_REWARD_MAX_PARTS = 16;
export const USER_REWARD_MAX_PART_NAME = 64;

/**
 * The most memory a reward function may hold in ArrayBuffers and typed arrays at once. Their bytes live outside
 * the JavaScript heap, so no heap limit counts them: the sandbox's own ArrayBuffer and typed-array constructors
 * (and every method that makes a new buffer) count them instead, and refuse past this.
 */
export const USER_REWARD_BUFFER_LIMIT_BYTES = 256 * 2 ** 20;

/** The JavaScript heap of Node's sandbox thread (worker_threads resourceLimits). */
export const USER_REWARD_HEAP_LIMIT_MB = 512;

/**
 * The only globals the person's code finds in either sandbox: ECMAScript's own builtins. Everything else the
 * browser's worker scope has (fetch, XMLHttpRequest, WebSocket, EventSource, importScripts, indexedDB, caches,
 * BroadcastChannel, navigator with its storage and OPFS, webkitRequestFileSystem(Sync), Worker, SharedWorker,
 * postMessage, timers, crypto, structuredClone, ...) is deleted from the scope and every prototype of it before the
 * person's code is parsed. SharedArrayBuffer and WebAssembly are left out too: memory no counter would see.
 */
export const ALLOWED_GLOBALS = [
  'globalThis',
  'Infinity',
  'NaN',
  'undefined',
  'Object',
  'Function',
  'Array',
  'Number',
  'Boolean',
  'String',
  'Symbol',
  'BigInt',
  'Math',
  'JSON',
  'Date',
  'RegExp',
  'Promise',
  'Proxy',
  'Reflect',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'WeakRef',
  'FinalizationRegistry',
  'Iterator',
  'Intl',
  'Error',
  'AggregateError',
  'EvalError',
  'RangeError',
  'ReferenceError',
  'SyntaxError',
  'TypeError',
  'URIError',
  'SuppressedError',
  'ArrayBuffer',
  'DataView',
  'Atomics',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float16Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
  'parseInt',
  'parseFloat',
  'isNaN',
  'isFinite',
  'encodeURI',
  'encodeURIComponent',
  'decodeURI',
  'decodeURIComponent',
  'escape',
  'unescape',
  'eval',
] as const;

/** The runner's first message, once the person's script has run: batches are timed from here. */
export const READY = 'ready';

/** The typed-array constructors the sandbox wraps with its memory counter (those the engine has). */
const TYPED_ARRAYS = ALLOWED_GLOBALS.filter((n) => n.endsWith('Array') && n !== 'Array');

/** The global the person's script assigns its function to (its only declaration). */
const FUNCTION_GLOBAL = '__reward_fn__';

/** What the runner inside a sandbox answers for a batch (as JSON text). Checked again by readReply. */
export type RunnerReply =
  | { ok: true; scores: UserRewardScore[] }
  | { ok: false; kind: 'threw' | 'value' | 'memory'; index: number; message: string; line: number | null }
  | { ok: false; kind: 'compile'; index: -1; message: string; line: number | null; column?: number | null }
  | { ok: false; kind: 'setup'; index: -1; message: string; line: null };

/**
 * The person's script, parsed apart from the runner (Node: its own vm.Script; the browser: its own Blob, loaded by
 * importScripts after the runner has locked the scope down): the source, trailing semicolons dropped, as the value
 * of one `var`. Text that closes the parenthesis early changes nothing but this script: it is parsed after the
 * runner has run, cannot reach the runner's variables or postMessage, and what it leaves behind is checked like any
 * return value. The source starts on the script's line 2.
 */
export function functionScript(source: string): string {
  return `"use strict"; var ${FUNCTION_GLOBAL} = (\n${source.replace(/[\s;]+$/, '')}\n);\n`;
}

/**
 * The person's script as a syntax check only: functionScript's text, same lines and columns, behind a `throw` that
 * runs before any of it. A script is parsed whole before its first statement runs, so text that parses stops at the
 * throw (nothing of the person's runs) and text that does not parse fails with the parser's own line and column,
 * which a worker's error event carries (the browser's importScripts error does not).
 */
export function syntaxCheckScript(source: string): string {
  return functionScript(source).replace(/^"use strict"; /, '"use strict"; throw 0; ');
}

/** The line of functionScript's text on which the person's source starts. */
export const FUNCTION_FIRST_LINE = 2;

/** What the runner needs to know, fixed before the person's code runs. */
interface RunnerSettings {
  /** The person's script's name in stack traces (reward_fn.js in Node, its Blob's URL in the browser). */
  file: string;
  firstLine: number;
  bufferLimit: number;
  maxParts: number;
  maxPartName: number;
  allowed: readonly string[];
  typedArrays: readonly string[];
}

/**
 * The runner, an expression whose value is `(global, settings) => ({ lockdown, loaded, run })`, evaluated in the
 * sandbox's realm before any of the person's code. It captures every builtin it uses, puts the memory counter
 * into the scope's ArrayBuffer and typed arrays (Proxies over the originals, whose prototypes' `constructor` and
 * buffer-making methods point to the counted ones; all fixed, non-writable, non-configurable), and then:
 * - lockdown() deletes every global outside ALLOWED_GLOBALS, own and inherited;
 * - loaded(error) takes the person's function from FUNCTION_GLOBAL once its script has run (or the error it failed
 *   with, for a compile reply);
 * - run(batchJson) parses the batch with the realm's own JSON.parse, calls the function once per completion and
 *   answers the RunnerReply's JSON text. The function runs in strict mode and sees only its arguments (made in its
 *   own realm, so no object of the host, whose constructors would lead out of a vm context) and the locked scope.
 */
const RUNNER = `(function (G, S) {
  "use strict";
  const parse = JSON.parse, stringify = JSON.stringify, isFinite = Number.isFinite, keys = Object.keys, isArray = Array.isArray;
  const ownKeys = Reflect.ownKeys, getProto = Reflect.getPrototypeOf, del = Reflect.deleteProperty, define = Reflect.defineProperty;
  const construct = Reflect.construct, apply = Reflect.apply, getOwn = Reflect.getOwnPropertyDescriptor;
  const ObjectProto = Object.prototype, Num = Number, trunc = Math.trunc, RangeErr = RangeError, ProxyC = Proxy;
  const FILE = S.file, FIRST_LINE = S.firstLine, LIMIT = S.bufferLimit, MAX_PARTS = S.maxParts, MAX_NAME = S.maxPartName;
  const allowed = Object.create(null);
  for (const n of S.allowed) allowed[n] = true;
  const fixed = (o, k, value) => define(o, k, { value, writable: false, configurable: false, enumerable: false });

  // The memory counter: bytes held in ArrayBuffers and typed arrays, released as the collector frees them.
  let held = 0;
  let over = null;
  const released = new FinalizationRegistry((n) => { held -= n; });
  const mib = (n) => (n / 1048576 >= 10 ? Math.round(n / 1048576) : Math.round(n / 104857.6) / 10) + ' MiB';
  const charge = (bytes) => {
    if (bytes > LIMIT - held) {
      over = 'tried to hold more than ' + mib(LIMIT) + ' in ArrayBuffers and typed arrays (' + mib(held) + ' held, ' + mib(bytes) + ' more asked for)';
      throw new RangeErr('reward_fn ' + over);
    }
    held += bytes;
  };
  const counted = (o, bytes) => { if (bytes > 0) released.register(o, bytes); return o; };
  const toIndex = (v) => { const n = trunc(Num(v)); return n > 0 ? n : 0; };
  const AB = G.ArrayBuffer;
  const abLength = getOwn(AB.prototype, 'byteLength').get;
  const isBuffer = (o) => { try { apply(abLength, o, []); return true; } catch (e) { return false; } };
  const TA = getProto(G.Uint8Array);
  const taLength = getOwn(TA.prototype, 'byteLength').get;
  const CountedAB = new ProxyC(AB, {
    construct(t, args, nt) {
      const o = args[1];
      const options = o !== null && typeof o === 'object' && o.maxByteLength !== undefined ? { maxByteLength: toIndex(o.maxByteLength) } : undefined;
      const length = toIndex(args[0]);
      const bytes = options && options.maxByteLength > length ? options.maxByteLength : length;
      charge(bytes);
      try { return counted(construct(t, options ? [length, options] : [length], nt), bytes); } catch (e) { held -= bytes; throw e; }
    },
  });
  fixed(G, 'ArrayBuffer', CountedAB);
  fixed(AB.prototype, 'constructor', CountedAB);
  for (const name of ['transfer', 'transferToFixedLength']) {
    const f = AB.prototype[name];
    if (typeof f !== 'function') continue;
    fixed(AB.prototype, name, function (length) {
      const bytes = length === undefined ? apply(abLength, this, []) : toIndex(length);
      charge(bytes);
      try { return counted(apply(f, this, [bytes]), bytes); } catch (e) { held -= bytes; throw e; }
    });
  }
  for (const name of S.typedArrays) {
    const T = G[name];
    if (typeof T !== 'function') continue;
    const size = T.BYTES_PER_ELEMENT;
    const Counted = new ProxyC(T, {
      construct(t, args, nt) {
        const a = args[0];
        if (a === null || typeof a !== 'object') {
          const bytes = toIndex(a) * size;
          charge(bytes);
          try { return counted(construct(t, [bytes / size], nt), bytes); } catch (e) { held -= bytes; throw e; }
        }
        if (isBuffer(a)) return construct(t, args, nt);
        let guess = 0;
        try { guess = toIndex(a.length) * size; } catch (e) { guess = 0; }
        charge(guess);
        let made;
        try { made = construct(t, args, nt); } catch (e) { held -= guess; throw e; }
        held -= guess;
        const bytes = apply(taLength, made, []);
        charge(bytes);
        return counted(made, bytes);
      },
    });
    fixed(G, name, Counted);
    fixed(T.prototype, 'constructor', Counted);
    for (const k of ['fromBase64', 'fromHex']) del(T, k);
  }
  for (const name of ['toReversed', 'toSorted', 'with']) {
    const f = TA.prototype[name];
    if (typeof f !== 'function') continue;
    fixed(TA.prototype, name, function () {
      const bytes = apply(taLength, this, []);
      charge(bytes);
      try { return counted(apply(f, this, arguments), bytes); } catch (e) { held -= bytes; throw e; }
    });
  }

  const describe = (v) =>
    typeof v === 'string' ? 'the string ' + stringify(v.length > 40 ? v.slice(0, 40) + '...' : v)
    : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v === undefined ? String(v)
    : v === null ? 'null'
    : typeof v === 'function' ? 'a function'
    : isArray(v) ? 'an array'
    : typeof v === 'object' ? 'an object'
    : typeof v;
  const userAt = (e) => {
    const stack = String((e && e.stack) || '');
    let at = 0;
    for (;;) {
      const i = stack.indexOf(FILE + ':', at);
      if (i < 0) return null;
      const m = /^:(\\d+)(?::(\\d+))?/.exec(stack.slice(i + FILE.length));
      if (m) {
        const line = Number(m[1]) - FIRST_LINE + 1;
        if (line >= 1) return { line, column: m[2] === undefined ? null : Number(m[2]) };
      }
      at = i + 1;
    }
  };
  const userLine = (e) => {
    const at = userAt(e);
    return at === null ? null : at.line;
  };
  const compileFailure = (message, e) => {
    const at = userAt(e);
    return { ok: false, kind: 'compile', index: -1, message, line: at === null ? null : at.line, column: at === null ? null : at.column };
  };
  const errorText = (e) => (e && typeof e === 'object' && typeof e.message === 'string' ? (e.name ? e.name + ': ' : '') + e.message : 'threw ' + describe(e));

  let fn;
  let setup = null;
  return {
    lockdown() {
      for (let o = G; o !== null && o !== ObjectProto; o = getProto(o)) {
        for (const k of ownKeys(o)) {
          if (o === G && typeof k === 'string' && allowed[k] === true) continue;
          if (!del(o, k) && o === G) define(o, k, { value: undefined });
        }
      }
    },
    loaded(error) {
      if (error !== undefined) {
        const message = errorText(error).replace("Failed to execute 'importScripts' on 'WorkerGlobalScope': ", '');
        setup = compileFailure(message, error);
        return;
      }
      try {
        fn = G[${JSON.stringify(FUNCTION_GLOBAL)}];
      } catch (e) {
        setup = compileFailure(errorText(e), e);
      }
    },
    run(batchJson) {
      if (setup !== null) return stringify(setup);
      const batch = parse(batchJson);
      if (typeof fn !== 'function') return stringify({ ok: false, kind: 'setup', index: -1, message: 'reward_fn must be a function (prompt, completion, item) => number, but its value is ' + describe(fn), line: null });
      const scores = [];
      for (let i = 0; i < batch.length; i++) {
        const b = batch[i];
        const bad = (what) => stringify({ ok: false, kind: 'value', index: i, message: what, line: null });
        let v;
        try {
          v = fn(b.prompt, b.completion, b.item);
        } catch (e) {
          if (over !== null) return stringify({ ok: false, kind: 'memory', index: i, message: over, line: null });
          return stringify({ ok: false, kind: 'threw', index: i, message: errorText(e), line: userLine(e) });
        }
        if (over !== null) return stringify({ ok: false, kind: 'memory', index: i, message: over, line: null });
        if (typeof v === 'number') {
          if (!isFinite(v)) return bad(describe(v));
          scores.push({ reward: v, parts: {} });
          continue;
        }
        if (v === null || typeof v !== 'object' || isArray(v)) return bad(describe(v));
        if (typeof v.then === 'function') return bad('a Promise (the function must return its reward synchronously)');
        const reward = v.reward;
        if (typeof reward !== 'number' || !isFinite(reward)) return bad('an object whose reward is ' + describe(reward));
        const parts = {};
        const given = v.parts;
        if (given !== undefined) {
          if (given === null || typeof given !== 'object' || isArray(given)) return bad('an object whose parts are ' + describe(given));
          const names = keys(given);
          if (names.length > MAX_PARTS) return bad('an object with ' + names.length + ' parts (at most ' + MAX_PARTS + ')');
          for (const k of names) {
            if (k.length < 1 || k.length > MAX_NAME) return bad('an object with a part named ' + describe(k) + ' (' + k.length + ' characters; a name has 1 to ' + MAX_NAME + ')');
            const p = given[k];
            if (typeof p !== 'number' || !isFinite(p)) return bad('an object whose parts.' + k + ' is ' + describe(p));
            define(parts, k, { value: p, writable: true, enumerable: true, configurable: true });
          }
        }
        scores.push({ reward, parts });
      }
      return stringify({ ok: true, scores });
    },
  };
})`;

/** The runner's settings for a sandbox whose person's script is named `file`. */
function runnerSettings(file: string, options: UserRewardSandboxOptions): RunnerSettings {
  return {
    file,
    firstLine: FUNCTION_FIRST_LINE,
    bufferLimit: options.bufferLimitBytes ?? USER_REWARD_BUFFER_LIMIT_BYTES,
    maxParts: USER_REWARD_MAX_PARTS,
    maxPartName: USER_REWARD_MAX_PART_NAME,
    allowed: ALLOWED_GLOBALS,
    typedArrays: TYPED_ARRAYS,
  };
}

/**
 * The browser sandbox's runner script, the Blob worker's whole text (no byte of the person's in it). Started with
 * the person's script's Blob URL as the worker's name, it captures postMessage, importScripts and the name, sets
 * its message handler, builds the runner, locks the scope down, and only then loads the person's script. Each
 * message is `{ nonce, batch }` as JSON text (the batch as JSON text within); the answer is the nonce, a newline and the runner's reply. The
 * person's code cannot read the messages or post one: the handler, postMessage and the nonce are out of its reach.
 */
export function browserRunnerScript(options: UserRewardSandboxOptions = {}): string {
  return `"use strict";
(function () {
  const post = self.postMessage.bind(self);
  const load = self.importScripts.bind(self);
  const parse = JSON.parse;
  const url = self.name;
  const runner = (${RUNNER})(self, Object.assign(${JSON.stringify(runnerSettings('', options))}, { file: url }));
  self.onmessage = (e) => {
    const m = parse(e.data);
    const reply = runner.run(m.batch);
    post(m.nonce + '\\n' + (typeof reply === 'string' ? reply : ''));
  };
  runner.lockdown();
  let error;
  try {
    load(url);
  } catch (e) {
    error = e;
  }
  runner.loaded(error);
  post(${JSON.stringify(READY)});
})();
`;
}

/**
 * Node's runner program, run with vm in the sandbox's fresh context before the person's script: its value is the
 * runner (see RUNNER), fed the context's global.
 */
export function nodeRunnerProgram(options: UserRewardSandboxOptions = {}): string {
  return `(${RUNNER})(globalThis, ${JSON.stringify(runnerSettings(USER_REWARD_FILE, options))})`;
}

/**
 * One running sandbox as its host sees it (a Blob worker relayed by the page, a worker thread): batches go out as
 * `{ nonce, batch }` JSON text (the batch itself JSON text inside it); the runner answers READY once, then the nonce, a newline and its reply per batch.
 */
export interface SandboxChannel {
  postMessage(data: string): void;
  terminate(): void;
  onmessage: ((data: string) => void) | null;
  /**
   * The sandbox itself failed (not the person's function, whose errors the runner reports): the failure's message,
   * or a whole message for the person when it starts with "reward_fn".
   */
  onerror: ((message: string, at?: { line: number; column: number }) => void) | null;
}

/** A fresh secret for one batch: 128 random bits as hex. */
function nonce(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The host's side of a sandbox, the same for the browser and Node: starts one with `start` when a batch comes and
 * none is running, waits for READY within the start limit, then sends each batch with a fresh nonce and reads only
 * the reply that carries it, within the time limit; anything else stops the sandbox (the next batch starts a fresh
 * one). Replies are checked by readReply.
 */
export function hostedRewardFunction(
  start: () => SandboxChannel,
  options: UserRewardSandboxOptions = {},
  source: string | null = null,
): UserRewardFunction {
  const limitMs = options.timeLimitMs ?? USER_REWARD_TIME_LIMIT_MS;
  const startMs = options.startLimitMs ?? USER_REWARD_START_LIMIT_MS;
  let sandbox: { channel: SandboxChannel; ready: Promise<void> } | null = null;
  const stop = () => {
    sandbox?.channel.terminate();
    sandbox = null;
  };
  /** Listens on `channel` until `settle` says it is done; a timer past `ms` fails it with `late`. */
  const exchange = <T>(
    channel: SandboxChannel,
    ms: number,
    late: () => UserRewardError,
    onMessage: (data: string, finish: (r: { value: T } | { error: UserRewardError; stop: boolean }) => void) => void,
  ): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const finish = (r: { value: T } | { error: UserRewardError; stop: boolean }) => {
        clearTimeout(timer);
        channel.onmessage = null;
        channel.onerror = null;
        if ('value' in r) return resolve(r.value);
        if (r.stop) stop();
        reject(r.error);
      };
      const timer = setTimeout(() => finish({ error: late(), stop: true }), ms);
      channel.onmessage = (data) => onMessage(data, finish);
      channel.onerror = (message) => {
        const text = message.startsWith('reward_fn')
          ? message
          : `reward_fn: its sandbox failed: ${message.replace(/^Uncaught /, '')}`;
        finish({ error: new UserRewardError(text), stop: true });
      };
    });
  const notAReply = (what: string) => ({
    error: new UserRewardError(`reward_fn: its sandbox answered ${what}, so it was stopped`),
    stop: true,
  });
  return {
    async score(batch) {
      if (!sandbox) {
        const channel = start();
        const ready = exchange<void>(
          channel,
          startMs,
          () =>
            new UserRewardError(
              `reward_fn: its sandbox did not start within ${startMs / 1000} s (an endless loop where the function is defined?), so it was stopped`,
            ),
          (data, finish) =>
            finish(
              data === READY
                ? { value: undefined }
                : notAReply('before it was ready, with a message that is not its own'),
            ),
        );
        sandbox = { channel, ready };
      }
      const { channel, ready } = sandbox;
      await ready;
      const secret = nonce();
      const answer = exchange<UserRewardScore[]>(
        channel,
        limitMs,
        () => timeLimitError(batch.length, limitMs),
        (data, finish) => {
          if (!data.startsWith(`${secret}\n`))
            return finish(notAReply('with a message that is not the reply to this batch'));
          const r = readReply(data.slice(secret.length + 1), batch, source);
          finish('scores' in r ? { value: r.scores } : r);
        },
      );
      channel.postMessage(JSON.stringify({ nonce: secret, batch: JSON.stringify(batch) }));
      return answer;
    },
    destroy: stop,
  };
}

/** `s` quoted and cut for a message. */
function shown(s: string, max = 40): string {
  return JSON.stringify(s.length > max ? `${s.slice(0, max)}...` : s);
}

/** A value as a message names it: "Infinity", "null", "the string \"x\"", "an array". */
function described(v: unknown): string {
  if (typeof v === 'string') return `the string ${shown(v)}`;
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'function') return 'a function';
  return String(v);
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** One score of a reply, checked as the host receives it: a finite reward and bounded, named, finite parts. */
function checkedScore(s: unknown, fail: (what: string) => never): UserRewardScore {
  if (!isRecord(s)) return fail(described(s));
  if (typeof s.reward !== 'number' || !Number.isFinite(s.reward)) return fail(described(s.reward));
  if (s.parts === undefined) return { reward: s.reward, parts: {} };
  if (!isRecord(s.parts)) return fail(`an object whose parts are ${described(s.parts)}`);
  const names = Object.keys(s.parts);
  if (names.length > USER_REWARD_MAX_PARTS)
    fail(`an object with ${names.length} parts (at most ${USER_REWARD_MAX_PARTS})`);
  const parts: [string, number][] = [];
  for (const k of names) {
    if (k.length < 1 || k.length > USER_REWARD_MAX_PART_NAME)
      fail(
        `an object with a part named ${described(k)} (${k.length} characters; a name has 1 to ${USER_REWARD_MAX_PART_NAME})`,
      );
    const p = s.parts[k];
    if (typeof p !== 'number' || !Number.isFinite(p)) fail(`an object whose parts.${k} is ${described(p)}`);
    parts.push([k, p as number]);
  }
  return { reward: s.reward, parts: Object.fromEntries(parts) };
}

/**
 * The scores of a runner's reply (JSON text), or the UserRewardError it stands for, naming the completion, the
 * value and the line. The host trusts nothing of it: the function shares its realm with the runner and may have
 * bent the runner's builtins, so every score is checked here again (an array of exactly the batch's length, each
 * a finite reward with at most USER_REWARD_MAX_PARTS finite parts named by 1 to USER_REWARD_MAX_PART_NAME
 * characters). Returns `stop: true` for replies after which the sandbox should not be used again.
 */
export function readReply(
  replyJson: string,
  batch: readonly UserRewardInput[],
  source: string | null = null,
): { scores: UserRewardScore[] } | { error: UserRewardError; stop: boolean } {
  const which = (i: number) =>
    `completion ${i} (${shown(batch[i]?.completion ?? '')}, prompt ${shown(batch[i]?.item.prompt ?? '', 24)})`;
  const returned = (i: number, what: string) =>
    new UserRewardError(
      `reward_fn returned ${what} for ${which(i)}; it must return a finite number or { reward: number, parts?: { name: number } }`,
    );
  const broken = (what: string) => ({
    error: new UserRewardError(`reward_fn: its sandbox answered ${what}, which is not a reply, so it was stopped`),
    stop: true,
  });
  let reply: unknown;
  try {
    reply = JSON.parse(replyJson);
  } catch {
    return broken(`text that is not JSON (${shown(String(replyJson))})`);
  }
  if (!isRecord(reply) || typeof reply.ok !== 'boolean') return broken(described(reply));
  if (reply.ok) {
    const scores = reply.scores;
    if (!Array.isArray(scores)) return broken(`scores that are ${described(scores)}`);
    if (scores.length !== batch.length) return broken(`${scores.length} scores for ${batch.length} completions`);
    const out: UserRewardScore[] = [];
    for (let i = 0; i < scores.length; i++) {
      try {
        out.push(
          checkedScore(scores[i], (what) => {
            throw returned(i, what);
          }),
        );
      } catch (e) {
        return { error: e as UserRewardError, stop: true };
      }
    }
    return { scores: out };
  }
  const { kind, index, message, line } = reply;
  if (typeof message !== 'string') return broken(`a failure whose message is ${described(message)}`);
  const text = message.length > 500 ? `${message.slice(0, 500)}...` : message;
  const at = typeof line === 'number' && Number.isInteger(line) && line >= 1 ? line : null;
  if (kind === 'setup') return { error: new UserRewardError(text), stop: false };
  if (kind === 'compile') {
    const column = typeof reply.column === 'number' ? reply.column : null;
    // Without the source (a caller that has none), the line as reported.
    const place =
      source === null ? (at === null ? null : { line: at, column, atEnd: false }) : sourcePosition(source, at, column);
    return { error: compileError(text, place), stop: true };
  }
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= batch.length)
    return broken(`a failure for completion ${described(index)} of ${batch.length}`);
  if (kind === 'threw')
    return {
      error: new UserRewardError(`reward_fn threw ${at !== null ? `at line ${at} ` : ''}on ${which(index)}: ${text}`),
      stop: false,
    };
  if (kind === 'value') return { error: returned(index, text), stop: false };
  if (kind === 'memory')
    return {
      error: new UserRewardError(`reward_fn ${text} on ${which(index)}, so its sandbox was stopped`),
      stop: true,
    };
  return broken(`a failure of kind ${described(kind)}`);
}

/** The scores of a runner's reply, or throws the UserRewardError it stands for (see readReply). */
export function scoresOfReply(replyJson: string, batch: readonly UserRewardInput[]): UserRewardScore[] {
  const r = readReply(replyJson, batch);
  if ('error' in r) throw r.error;
  return r.scores;
}

/** The error of a reward function that does not compile, at its place in the person's source when known. */
export function compileError(message: string, at: SourcePosition | null): UserRewardError {
  const where =
    at === null
      ? ''
      : ` (line ${at.line}${at.column !== null ? `, column ${at.column}` : ''}${at.atEnd ? ': the function ends early' : ''})`;
  return new UserRewardError(`reward_fn does not compile${where}: ${message}`, at);
}

/** The error of a batch that ran past the time limit; the sandbox was stopped. */
export function timeLimitError(completions: number, limitMs: number): UserRewardError {
  return new UserRewardError(
    `reward_fn did not finish a batch of ${completions} completions within ${limitMs / 1000} s (an endless loop?), so its sandbox was stopped`,
  );
}
