// User-written reward functions: the Node sandbox (a good function, parts, a throw with its line, a syntax error
// with its line, wrong and non-finite returns naming the completion, an endless loop stopped, nothing of Node or
// the network in scope), sealed (the function compiled apart from the runner, parts bounded, ArrayBuffers and the
// heap bounded with a message and a fresh sandbox after), the host's check of every reply, the browser sandbox's
// per-batch nonce (with a stand-in for the page's worker; the real one is e2e/reward-sandbox.spec.ts), the config
// rules of reward_fn and reward_weights.user, and a GRPO run on the CPU learner that scores with the function and
// logs rewards/user/mean.

import { describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../../cli/files';
import { nodeRewardSandbox } from '../../cli/reward-sandbox';
import { checkConfig, derive, resolveConfig } from '../../schema/config';
import { runToEnd } from '../../testing/run-to-end';
import { browserRewardSandbox } from '../../worker/reward-sandbox';
import type { HostedWorker } from '../../worker/sandbox-host';
import { READY, scoresOfReply, type UserRewardInput, type UserRewardSandboxOptions } from './user-reward';

const item = { prompt: 'copy:abc=', answer: 'abc' };
const batch: UserRewardInput[] = [
  { prompt: item.prompt, completion: 'abc', item },
  { prompt: item.prompt, completion: 'abx', item },
];

/** The scores of `source` on `batch`, or the message it fails with. */
async function run(source: string, options: UserRewardSandboxOptions = {}): Promise<unknown> {
  const f = nodeRewardSandbox(source, { timeLimitMs: 20_000, ...options });
  try {
    return await f.score(batch);
  } catch (e) {
    return (e as Error).message;
  } finally {
    f.destroy();
  }
}

describe('reward_fn sandbox (Node)', () => {
  it('scores every completion of a batch, with named parts', async () => {
    expect(await run('(prompt, completion, item) => (completion === item.answer ? 1 : 0)')).toEqual([
      { reward: 1, parts: {} },
      { reward: 0, parts: {} },
    ]);
    expect(await run('(p, c) => ({ reward: c.length / 10, parts: { x: c.includes("x") ? 1 : 0 } });')).toEqual([
      { reward: 0.3, parts: { x: 0 } },
      { reward: 0.3, parts: { x: 1 } },
    ]);
  });

  it('names the line of a throw and the completion it threw on', async () => {
    const msg = await run(
      '(p, c) => {\n  const ok = c === "abc";\n  if (!ok) throw new Error("not abc");\n  return 1;\n}',
    );
    expect(msg).toBe('reward_fn threw at line 3 on completion 1 ("abx", prompt "copy:abc="): Error: not abc');
  });

  it('names the line of a syntax error', async () => {
    expect(await run('(p, c) => {\n  return c.length +;\n}')).toMatch(
      /^reward_fn does not compile \(line 2\): SyntaxError: /,
    );
  });

  it('names the completion and the value of a non-finite or wrong-typed return', async () => {
    expect(await run('(p, c) => (c === "abx" ? NaN : 1)')).toMatch(/^reward_fn returned NaN for completion 1 \("abx"/);
    expect(await run('(p, c) => "1"')).toMatch(/^reward_fn returned the string "1" for completion 0 \("abc"/);
    expect(await run('(p, c) => ({ reward: Infinity })')).toMatch(
      /returned an object whose reward is Infinity for completion 0/,
    );
    expect(await run('(p, c) => ({ reward: 1, parts: { a: "x" } })')).toMatch(
      /returned an object whose parts\.a is the string "x"/,
    );
    expect(await run('() => {}')).toMatch(/returned undefined for completion 0/);
    expect(await run('42')).toMatch(/reward_fn must be a function .* but its value is 42/);
  });

  it('stops an endless loop at the time limit, and a new batch runs in a fresh sandbox', async () => {
    const f = nodeRewardSandbox('(p, c) => { if (c === "abx") for (;;) {} return 1; }', { timeLimitMs: 300 });
    await expect(f.score(batch)).rejects.toThrow(
      /did not finish a batch of 2 completions within 0.3 s \(an endless loop\?\)/,
    );
    await expect(f.score(batch.slice(0, 1))).resolves.toEqual([{ reward: 1, parts: {} }]);
    f.destroy();
  });

  it('has no network, storage, timers, require or process in scope, and no way to make code from strings', async () => {
    const names = [
      'fetch',
      'XMLHttpRequest',
      'WebSocket',
      'indexedDB',
      'caches',
      'BroadcastChannel',
      'importScripts',
      'require',
      'process',
      'WebAssembly',
      'SharedArrayBuffer',
      'setTimeout',
      'module',
      'globalThis.process',
    ];
    const probe = `() => [${names.map((n) => `typeof ${n}`).join(', ')}].filter((t) => t !== 'undefined').length`;
    expect(await run(probe)).toEqual([
      { reward: 0, parts: {} },
      { reward: 0, parts: {} },
    ]);
    expect(await run('() => { try { return Function("return 1")(); } catch (e) { return -1; } }')).toEqual([
      { reward: -1, parts: {} },
      { reward: -1, parts: {} },
    ]);
  });

  it('cannot load a module with import(): the vm context has no loader for it', async () => {
    // import() is syntax, so no global can be deleted to stop it; the context must refuse it. The promise settles
    // after the batch returns, so the next batch in the same sandbox reads how it settled: 1 loaded, 2 refused.
    const f = nodeRewardSandbox(
      '() => { if (globalThis.__import === undefined) { globalThis.__import = 0; import("node:fs").then(() => { globalThis.__import = 1; }, () => { globalThis.__import = 2; }); } return globalThis.__import; }',
      { timeLimitMs: 2000 },
    );
    try {
      expect((await f.score(batch)).map((s) => s.reward)).toEqual([0, 0]);
      await new Promise((r) => setTimeout(r, 50));
      expect((await f.score(batch)).map((s) => s.reward)).toEqual([2, 2]);
    } finally {
      f.destroy();
    }
  });
});

describe('reward_fn sandbox (Node): sealed', { timeout: 120_000 }, () => {
  it('compiles the function on its own: text that closes the parenthesis early only fails to compile', async () => {
    const forged = JSON.stringify({ ok: true, scores: [{ reward: 1e308 }, { reward: 1e308 }] });
    expect(await run(`0); return function run(b){ return ${JSON.stringify(forged)}; }; (0`)).toMatch(
      /^reward_fn does not compile \(line 1\): SyntaxError: Illegal return statement/,
    );
    // Valid text around the parenthesis runs only in the person's own script, after the runner has been built.
    expect(await run('0); globalThis.run = () => "forged"; var __reward_fn__ = ((p, c) => c.length')).toEqual([
      { reward: 3, parts: {} },
      { reward: 3, parts: {} },
    ]);
  });

  it('gets its arguments made in its own realm: no host constructor leads out of the context', async () => {
    const outOfContext =
      '(p, c, item) => { try { return item.constructor.constructor("return typeof process")() === "object" ? 1 : 0; } catch (e) { return e instanceof EvalError ? -1 : -2; } }';
    expect(await run(outOfContext)).toEqual([
      { reward: -1, parts: {} },
      { reward: -1, parts: {} },
    ]);
  });

  it("checks every reply again on the host: bending the runner's builtins yields nothing it would refuse", async () => {
    const bent =
      '(() => { Array.prototype.push = function (s) { this[this.length] = { reward: "1", parts: null }; return this.length; }; return () => 1; })()';
    expect(await run(bent)).toMatch(/^reward_fn returned the string "1" for completion 0 \("abc"/);
  });

  it('bounds the parts: at most 16, each named by 1 to 64 characters', async () => {
    const many = (n: number, name: string) =>
      `() => ({ reward: 1, parts: Object.fromEntries(Array.from({ length: ${n} }, (_, i) => [${name} + i, 1])) })`;
    expect(await run(many(256, '"x".repeat(1 << 10)'))).toMatch(
      /^reward_fn returned an object with 256 parts \(at most 16\) for completion 0 \("abc"/,
    );
    expect(await run(many(2, '"x".repeat(64)'))).toMatch(
      /^reward_fn returned an object with a part named the string "x{40}\.\.\." \(65 characters; a name has 1 to 64\) for completion 0/,
    );
    expect(await run('() => ({ reward: 1, parts: { "": 1 } })')).toMatch(/a part named the string "" \(0 characters/);
    expect(await run(many(16, '"p"'))).toHaveLength(2);
  });

  it('refuses 2 GiB of ArrayBuffers with a message, and the next batch scores in a fresh sandbox', async () => {
    const f = nodeRewardSandbox(
      '(p, c) => { if (c === "abx") { const keep = []; for (let i = 0; i < 2048; i++) keep.push(new ArrayBuffer(1 << 20)); } return 1; }',
      { timeLimitMs: 20_000 },
    );
    try {
      await expect(f.score(batch)).rejects.toThrow(
        /^reward_fn tried to hold more than 256 MiB in ArrayBuffers and typed arrays \(256 MiB held, 1 MiB more asked for\) on completion 1 \("abx".*so its sandbox was stopped$/,
      );
      await expect(f.score(batch.slice(0, 1))).resolves.toEqual([{ reward: 1, parts: {} }]);
    } finally {
      f.destroy();
    }
  });

  it('counts typed arrays, copies and resizable buffers too, even when the function catches the refusal', async () => {
    expect(await run('() => { try { new Float64Array(2 ** 28); } catch (e) {} return 1; }')).toMatch(
      /\(0 MiB held, 2048 MiB more asked for\) on completion 0/,
    );
    // Under a 4 MiB limit, each way of making a new 64 KiB buffer, 100 times, kept: refused at the 65th.
    const loops = [
      'new Uint8Array(1 << 16)',
      'new Float64Array(1 << 13).slice()',
      'new Float64Array(1 << 13).map((x) => x)',
      'new Float64Array(1 << 13).filter(() => true)',
      'new Float64Array(1 << 13).toReversed()',
      'new ArrayBuffer(1 << 16).slice(0)',
      'Float64Array.from({ length: 1 << 13 })',
      'Float64Array.of(...new Array(1 << 13).fill(0))',
      'new Float64Array(new Array(1 << 13).fill(0))',
      'new (class extends Uint8Array {})(1 << 16)',
      'Reflect.construct(Uint8Array, [1 << 16])',
      'new ArrayBuffer(1, { maxByteLength: 1 << 16 })',
    ];
    const f = (make: string) =>
      `() => { const keep = []; try { for (let i = 0; i < 100; i++) keep.push(${make}); } catch (e) {} return keep.length; }`;
    for (const make of loops)
      expect(await run(f(make), { bufferLimitBytes: 4 << 20 }), make).toMatch(
        /^reward_fn tried to hold more than 4 MiB in ArrayBuffers and typed arrays/,
      );
    // The counted constructors are fixed: neither replaced nor deleted.
    const fixed =
      '() => { try { ArrayBuffer = null; } catch (e) {} try { delete globalThis.Float64Array; } catch (e) {} try { Uint8Array.prototype.constructor = null; } catch (e) {} return typeof ArrayBuffer + typeof Float64Array + typeof Uint8Array.prototype.constructor === "functionfunctionfunction" ? 1 : 0; }';
    expect(await run(fixed)).toEqual([
      { reward: 1, parts: {} },
      { reward: 1, parts: {} },
    ]);
  });

  it('stops a function that runs out of heap with a message, and the next batch scores in a fresh sandbox', async () => {
    const f = nodeRewardSandbox(
      '(p, c) => { if (c === "abx") { const a = []; for (;;) a.push({ n: a.length }); } return 1; }',
      {
        timeLimitMs: 20_000,
        heapLimitMb: 32,
      },
    );
    try {
      await expect(f.score(batch)).rejects.toThrow(
        'reward_fn ran out of memory (its sandbox may use 32 MB of heap), so its sandbox was stopped',
      );
      await expect(f.score(batch.slice(0, 1))).resolves.toEqual([{ reward: 1, parts: {} }]);
    } finally {
      f.destroy();
    }
  });
});

describe("the host's check of a reply", () => {
  const reply = (scores: string) => `{"ok":true,"scores":${scores}}`;
  const error = (text: string) => {
    try {
      scoresOfReply(text, batch);
    } catch (e) {
      return (e as Error).message;
    }
    return 'accepted';
  };

  it('names the completion and the kind of a bad value', () => {
    expect(error(reply('[{"reward":1},{"reward":1e999}]'))).toMatch(
      /^reward_fn returned Infinity for completion 1 \("abx", prompt "copy:abc="\); it must return a finite number/,
    );
    expect(error(reply('[{"reward":"1"},{"reward":1}]'))).toMatch(
      /^reward_fn returned the string "1" for completion 0/,
    );
    expect(error(reply('[{"reward":1,"parts":null},{"reward":1}]'))).toMatch(
      /^reward_fn returned an object whose parts are null for completion 0/,
    );
    expect(error(reply('[{"reward":1},{"reward":1,"parts":{"a":-1e999}}]'))).toMatch(
      /^reward_fn returned an object whose parts\.a is -Infinity for completion 1/,
    );
    expect(error(reply('[1,{"reward":1}]'))).toMatch(/^reward_fn returned 1 for completion 0/);
    expect(error(reply('[null,{"reward":1}]'))).toMatch(/^reward_fn returned null for completion 0/);
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`p${i}`, 1])));
    expect(error(reply(`[{"reward":1},{"reward":1,"parts":${many}}]`))).toMatch(
      /^reward_fn returned an object with 17 parts \(at most 16\) for completion 1/,
    );
    expect(error(reply(`[{"reward":1,"parts":{"${'n'.repeat(65)}":1}},{"reward":1}]`))).toMatch(
      /a part named the string "n{40}\.\.\." \(65 characters; a name has 1 to 64\) for completion 0/,
    );
  });

  it('refuses a reply that is not one: not JSON, scores not an array or of the wrong length, an unknown failure', () => {
    expect(error('nonsense')).toMatch(/^reward_fn: its sandbox answered text that is not JSON \("nonsense"\)/);
    expect(error(reply('{"0":1}'))).toMatch(/answered scores that are an object, which is not a reply/);
    expect(error(reply('[{"reward":1}]'))).toMatch(/answered 1 scores for 2 completions/);
    expect(error('[1,2]')).toMatch(/answered an array, which is not a reply/);
    expect(error('{"ok":false,"kind":"value","index":7,"message":"x","line":null}')).toMatch(
      /a failure for completion 7 of 2/,
    );
    expect(error('{"ok":false,"kind":"other","index":0,"message":"x","line":null}')).toMatch(
      /a failure of kind the string "other"/,
    );
    expect(scoresOfReply(reply('[{"reward":1,"parts":{"__proto__":2}},{"reward":0.5}]'), batch)).toEqual([
      { reward: 1, parts: JSON.parse('{"__proto__":2}') },
      { reward: 0.5, parts: {} },
    ]);
  });
});

describe('reward_fn sandbox (browser): the host reads only the reply to its own batch', () => {
  /** A stand-in for the page's worker: records what it is sent and lets the test answer. */
  function fakeWorker() {
    const sent: string[] = [];
    let terminated = 0;
    const w: HostedWorker = {
      postMessage: (data) => sent.push(data),
      terminate: () => {
        terminated++;
      },
      onmessage: null,
      onerror: null,
    };
    return { w, sent, terminated: () => terminated };
  }
  const good = JSON.stringify({
    ok: true,
    scores: [
      { reward: 1, parts: {} },
      { reward: 0, parts: {} },
    ],
  });
  /** The nonce of the batch the sandbox sent last, once it has been sent. */
  async function sentNonce(fake: ReturnType<typeof fakeWorker>, count: number): Promise<string> {
    await expect.poll(() => fake.sent.length).toBe(count);
    return (JSON.parse(fake.sent[count - 1]) as { nonce: string }).nonce;
  }

  it('answers with the reply that carries the batch nonce, and refuses a forged one that does not', async () => {
    const fake = fakeWorker();
    const f = browserRewardSandbox(() => fake.w)('() => 1', { timeLimitMs: 20_000 });
    const first = f.score(batch);
    // Nothing is sent before the runner says it is ready; a message before that is not the runner's.
    expect(fake.sent).toEqual([]);
    fake.w.onmessage?.(READY);
    const nonce = await sentNonce(fake, 1);
    expect(nonce).toMatch(/^[0-9a-f]{32}$/);
    fake.w.onmessage?.(`${nonce}\n${good}`);
    await expect(first).resolves.toEqual([
      { reward: 1, parts: {} },
      { reward: 0, parts: {} },
    ]);
    // A message without this batch's nonce (what the function would post, could it post) ends the sandbox.
    const second = f.score(batch);
    expect(await sentNonce(fake, 2)).not.toBe(nonce);
    fake.w.onmessage?.(good);
    await expect(second).rejects.toThrow(
      'reward_fn: its sandbox answered with a message that is not the reply to this batch, so it was stopped',
    );
    expect(fake.terminated()).toBe(1);
    f.destroy();
  });

  it('refuses a reply carrying an earlier batch nonce, and a message before the runner is ready', async () => {
    const fake = fakeWorker();
    const f = browserRewardSandbox(() => fake.w)('() => 1', { timeLimitMs: 20_000 });
    const first = f.score(batch);
    fake.w.onmessage?.(READY);
    const nonce = await sentNonce(fake, 1);
    fake.w.onmessage?.(`${nonce}\n${good}`);
    await first;
    const second = f.score(batch);
    await sentNonce(fake, 2);
    fake.w.onmessage?.(`${nonce}\n${good}`);
    await expect(second).rejects.toThrow(/not the reply to this batch/);
    const third = f.score(batch);
    fake.w.onmessage?.(`${nonce}\n${good}`);
    await expect(third).rejects.toThrow(
      'reward_fn: its sandbox answered before it was ready, with a message that is not its own, so it was stopped',
    );
    f.destroy();
  });
});

describe('reward_fn in the config', () => {
  const fn = '(p, c) => c.length';

  it('adds the reward function user with weight 1 unless reward_weights says otherwise', () => {
    expect(derive(resolveConfig('grpo', { task: 'copy', reward_fn: fn })).rewardWeights).toEqual({
      accuracy: 0.9,
      format: 0.1,
      user: 1,
    });
    expect(derive(resolveConfig('grpo', { task: 'copy' })).rewardWeights).toEqual({ accuracy: 0.9, format: 0.1 });
    expect(
      derive(resolveConfig('grpo', { task: 'copy', reward_fn: fn, reward_weights: { accuracy: 1, user: 0.5 } }))
        .rewardWeights,
    ).toEqual({ accuracy: 1, user: 0.5 });
  });

  it('accepts reward_weights.user only with a reward_fn, and warns when the function has no weight', () => {
    const base = resolveConfig('grpo', { task: 'copy' });
    expect(checkConfig({ ...base, reward_weights: { user: 1 } }).errors).toEqual([
      'reward_weights: user weighs the reward of reward_fn, which is empty; write a reward_fn or drop user',
    ]);
    expect(checkConfig({ ...base, reward_fn: fn, reward_weights: { user: 1 } }).errors).toEqual([]);
    expect(checkConfig({ ...base, reward_fn: fn, reward_weights: { accuracy: 1 } }).warnings).toContain(
      'reward_fn: runs but counts for nothing, since reward_weights gives user no weight; add user:1 to reward_weights',
    );
    expect(checkConfig({ ...base, reward_fn: '   ' }).errors[0]).toMatch(
      /^reward_fn: must be a non-empty string or null/,
    );
  });
});

describe('a GRPO run with a reward_fn', () => {
  it('scores every completion with it and logs rewards/user/mean and /std (CPU learner)', async () => {
    const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
    // The fraction of the completion's characters that are "a": a reward the task knows nothing of.
    const reward_fn =
      '(prompt, completion) => (completion.length ? (completion.split("a").length - 1) / completion.length : 0)';
    const config = resolveConfig('grpo', {
      task: 'copy',
      difficulty: 3,
      train_batch_size: 2,
      num_generations: 4,
      steps: 2,
      eval_every: 0,
      seed: 3,
      reward_fn,
      reward_weights: { accuracy: 1, user: 0.5 },
    });
    const records = await runToEnd({
      config,
      init: { config: warm.ck.config, params: warm.ck.params },
      tokenizer: warm.tok,
      backend: { kind: 'cpu' },
      rewardSandbox: nodeRewardSandbox,
    });
    expect(records.length).toBe(2);
    for (const r of records) {
      const m = r.metrics as Record<string, number>;
      expect(Number.isFinite(m['rewards/user/mean'])).toBe(true);
      expect(Number.isFinite(m['rewards/user/std'])).toBe(true);
      expect(m.reward).toBeCloseTo(m['rewards/accuracy/mean'] + 0.5 * m['rewards/user/mean'], 5);
    }
    // The inspector's rows carry the user's reward beside the task's parts, computed from their own text.
    const rows = (records[records.length - 1].groups ?? []).flatMap((g) => g.completions);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const expected = row.text.length ? (row.text.split('a').length - 1) / row.text.length : 0;
      expect(row.rewards.user).toBeCloseTo(expected, 6);
      expect(row.reason).toMatch(/; user /);
    }
  });

  it('refuses to start without a sandbox to run it in', async () => {
    const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
    const config = resolveConfig('grpo', {
      task: 'copy',
      train_batch_size: 1,
      num_generations: 2,
      steps: 1,
      eval_every: 0,
      reward_fn: '() => 1',
    });
    await expect(
      runToEnd({
        config,
        init: { config: warm.ck.config, params: warm.ck.params },
        tokenizer: warm.tok,
        backend: { kind: 'cpu' },
      }),
    ).rejects.toThrow(/no sandbox/);
  });
});
