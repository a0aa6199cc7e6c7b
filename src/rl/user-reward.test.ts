// User-written reward functions: the Node sandbox (a good function, parts, a throw with its line, a syntax error
// with its line, wrong and non-finite returns naming the completion, an endless loop stopped, nothing of Node or
// the network in scope), the browser script's removal of the network and storage globals (run in a vm context
// standing in for a worker's scope), the config rules of reward_fn and reward_weights.user, and a GRPO run on
// the CPU learner that scores with the function and logs rewards/user/mean.

import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../cli/files';
import { nodeRewardSandbox } from '../cli/reward-sandbox';
import { checkConfig, derive, resolveConfig } from './config';
import { runToEnd } from '../testing/run-to-end';
import { BLOCKED_GLOBALS, browserSandboxScript, type UserRewardInput } from './user-reward';

const item = { prompt: 'copy:abc=', answer: 'abc' };
const batch: UserRewardInput[] = [
  { prompt: item.prompt, completion: 'abc', item },
  { prompt: item.prompt, completion: 'abx', item },
];

/** The scores of `source` on `batch`, or the message it fails with. */
async function run(source: string, timeLimitMs = 2000): Promise<unknown> {
  const f = nodeRewardSandbox(source, { timeLimitMs });
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

describe('reward_fn sandbox (browser script)', () => {
  /** A stand-in for a dedicated worker's scope: the blocked globals on its prototype, as a browser has them. */
  function workerScope() {
    const proto: Record<string, unknown> = Object.fromEntries(BLOCKED_GLOBALS.map((n) => [n, () => 'reached']));
    const scope = Object.create(proto) as Record<string, unknown>;
    const posted: string[] = [];
    Object.assign(scope, {
      location: { href: 'blob:lab/1234' },
      postMessage: (m: string) => posted.push(m),
      indexedDB: {},
      fetch: () => 'own',
    });
    scope.self = scope;
    return { scope, posted };
  }

  it('removes every blocked global, own and inherited, before the user code runs', () => {
    const { scope, posted } = workerScope();
    const probe = `() => ${JSON.stringify(BLOCKED_GLOBALS)}.filter((n) => self[n] !== undefined).length`;
    runInNewContext(browserSandboxScript(probe).text, scope);
    (scope.onmessage as (e: { data: string }) => void)({ data: JSON.stringify(batch) });
    expect(JSON.parse(posted[0])).toEqual({
      ok: true,
      scores: [
        { reward: 0, parts: {} },
        { reward: 0, parts: {} },
      ],
    });
  });

  it('reports a throw at the line of the user code in its blob script', () => {
    const { scope, posted } = workerScope();
    const script = browserSandboxScript('(p, c) => {\n  throw new Error("no");\n}');
    runInNewContext(script.text, scope, { filename: 'blob:lab/1234' });
    (scope.onmessage as (e: { data: string }) => void)({ data: JSON.stringify(batch) });
    expect(JSON.parse(posted[0])).toMatchObject({ ok: false, kind: 'threw', index: 0, line: 2, message: 'Error: no' });
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
    const warm = await loadCheckpointDir(new URL('../../public/checkpoints/copy', import.meta.url).pathname);
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
    const warm = await loadCheckpointDir(new URL('../../public/checkpoints/copy', import.meta.url).pathname);
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
