// Trying a reward_fn before a run: a compile error is placed at the person's own line and column (the wrapper's lines
// taken off; a function that ends early is placed at the end of its last line), one-line and multi-line; the check
// only compiles; the trial batch is the task's answers right and wrong, each scored through the Node sandbox.

import { describe, expect, it } from 'vitest';
import { nodeRewardSandbox } from '../../cli/reward-sandbox';
import { resolveConfig } from '../../schema/config';
import { alteredAnswer, checkRewardFn, trialBatch, tryRewardFn } from './reward-fn-trial';
import { runInNewContext } from 'node:vm';
import { compileError, functionScript, readReply, sourcePosition, syntaxCheckScript } from './user-reward';

describe("a reward_fn's error at the person's own place", () => {
  it('maps a line past the source (the closing wrapper) to the end of the last line', () => {
    // One line: the parser stops at the wrapper's ")" on the script's line 3, reported as source line 2.
    expect(sourcePosition('(p, c) => c.length +', 2, 1)).toEqual({ line: 1, column: 21, atEnd: true });
    // Trailing blanks and semicolons are not the source's: functionScript drops them.
    expect(sourcePosition('(p, c) => c.length + ;\n\n', 2, 1)).toEqual({ line: 1, column: 21, atEnd: true });
    expect(sourcePosition('(p, c) => {\n  return 1;\n', 3, 1)).toEqual({ line: 2, column: 11, atEnd: true });
  });

  it('keeps a line inside the source, with its column as written', () => {
    expect(sourcePosition('(p, c) => {\n  return c.length +;\n}', 2, 20)).toEqual({
      line: 2,
      column: 20,
      atEnd: false,
    });
    expect(sourcePosition('(p, c) => 1', 1, null)).toEqual({ line: 1, column: null, atEnd: false });
    expect(sourcePosition('(p, c) => 1', null)).toBeNull();
    expect(sourcePosition('(p, c) => 1', 0, 3)).toBeNull();
  });

  it("says the place in the message, and reads it from a runner's reply against the source", () => {
    expect(compileError("SyntaxError: Unexpected token ')'", { line: 1, column: 21, atEnd: true }).message).toBe(
      "reward_fn does not compile (line 1, column 21: the function ends early): SyntaxError: Unexpected token ')'",
    );
    const reply = JSON.stringify({
      ok: false,
      kind: 'compile',
      index: -1,
      message: "SyntaxError: Unexpected token ')'",
      line: 2,
      column: 1,
    });
    const r = readReply(reply, [], '(p, c) => c.length +');
    expect('error' in r && r.error.at).toEqual({ line: 1, column: 21, atEnd: true });
    expect('error' in r && r.error.message).toMatch(
      /^reward_fn does not compile \(line 1, column 21: the function ends early\)/,
    );
    // Without the source, the line as the runner said it.
    const bare = readReply(reply, []);
    expect('error' in bare && bare.error.message).toMatch(/^reward_fn does not compile \(line 2, column 1\)/);
  });
});

describe("the browser's syntax-only script", () => {
  it("keeps the function script's lines and columns, and runs none of the person's text", () => {
    const source = '(p, c) => 1); globalThis.ran = true; (0';
    const check = syntaxCheckScript(source);
    expect(check.split('\n').slice(1)).toEqual(functionScript(source).split('\n').slice(1));
    const sandbox: Record<string, unknown> = {};
    let thrown: unknown = null;
    try {
      runInNewContext(check, sandbox);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBe(0);
    expect(sandbox.ran).toBeUndefined();
    expect(() => runInNewContext(syntaxCheckScript('(p, c) => c.length +'), {})).toThrow(/Unexpected token/);
  });
});

describe('trying a reward_fn (Node sandbox)', { timeout: 60_000 }, () => {
  const sandbox = nodeRewardSandbox;

  it('compiles a good function and names the line of a bad one, one-line and multi-line', async () => {
    expect(await checkRewardFn(sandbox, '(p, c) => c.length')).toBeNull();
    const oneLine = await checkRewardFn(sandbox, '(p, c) => c.length +');
    expect(oneLine?.at?.line).toBe(1);
    expect(oneLine?.at?.atEnd).toBe(true);
    expect(oneLine?.message).toMatch(/^reward_fn does not compile \(line 1, column 21: the function ends early\)/);
    const multi = await checkRewardFn(sandbox, '(p, c) => {\n  const n = c.length;\n  return n +* 2;\n}');
    expect(multi?.at?.line).toBe(3);
    expect(multi?.at?.atEnd).toBe(false);
    expect(await checkRewardFn(sandbox, '42')).toEqual({
      message: expect.stringMatching(/^reward_fn must be a function/),
      at: null,
    });
  });

  it('only compiles: the function is not called', async () => {
    // A function that throws on every call still compiles.
    expect(await checkRewardFn(sandbox, '() => { throw new Error("called") }')).toBeNull();
  });

  it("scores the task's answers, right and altered, through the sandbox", async () => {
    const config = resolveConfig('grpo', {
      task: 'copy',
      difficulty: 2,
      reward_fn: '(p, c, item) => (c === item.answer ? 1 : -1)',
    });
    const batch = trialBatch(config);
    expect(batch).toHaveLength(8);
    const r = await tryRewardFn(sandbox, config);
    if (!('rows' in r)) throw new Error(r.problem.message);
    expect(r.rows.map((x) => x.kind)).toEqual(batch.map((b) => b.kind));
    for (const row of r.rows) expect(row.reward).toBe(row.kind === 'correct' ? 1 : -1);
    const bad = await tryRewardFn(sandbox, { ...config, reward_fn: '(p, c) => c.length +' });
    expect('problem' in bad && bad.problem.at?.line).toBe(1);
    expect(await tryRewardFn(sandbox, { ...config, reward_fn: null })).toEqual({
      problem: { message: expect.stringMatching(/empty/), at: null },
    });
  });

  it('alters an answer into a different completion of the same length', () => {
    for (const a of ['abc', '120', 'x9', '0'])
      expect([alteredAnswer(a) !== a, alteredAnswer(a).length]).toEqual([true, a.length]);
    expect(alteredAnswer('')).toBe('?');
  });
});
