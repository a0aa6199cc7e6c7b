// Long page state stays out of the address: values too long for a link (a prompt list, a reward_fn, a chat
// template) are kept in this browser under their content hash and the address carries `ref.<field>=<hash>`; an
// address under MAX_ADDRESS_CHARS always; a link whose kept values this browser lacks opens without them and says so.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../schema/config';
import {
  MAX_ADDRESS_CHARS,
  MAX_INLINE_VALUE,
  MemoryLinkStateStore,
  expandLinkState,
  inlineAddress,
  shortenAddress,
} from './link-state';
import { configToUrlParams } from './schema';

/** A 300-row prompt list as the config holds it (the address of issue 26: 22,251 characters). */
const PROMPTS = Array.from({ length: 300 }, (_, i) => `{"prompt": "What is ${i} + ${i}?", "answer": "${2 * i}"}`).join(
  '\n',
);

describe('the address of a long config', () => {
  it('keeps long values in the store and the address short; expanding gives the same parameters back', async () => {
    const config = {
      ...resolveConfig('grpo'),
      task: 'prompts',
      prompts: PROMPTS,
      reward_fn: `(p, c) => ${'1 + '.repeat(200)}1`,
    };
    const full = configToUrlParams(config as never, 'grpo');
    expect(full.toString().length).toBeGreaterThan(20_000);
    const store = new MemoryLinkStateStore();
    const short = await shortenAddress(full, store);
    expect(short.address.length).toBeLessThanOrEqual(MAX_ADDRESS_CHARS);
    expect(short.stored.sort()).toEqual(['prompts', 'reward_fn']);
    const params = new URLSearchParams(short.address);
    expect(params.get('prompts')).toBeNull();
    expect(params.get('ref.prompts')).toMatch(/^[0-9a-f]{32}$/);
    expect(params.get('task')).toBe('prompts');
    const back = await expandLinkState(short.address, store);
    expect(back.missing).toEqual([]);
    expect(new URLSearchParams(back.search).get('prompts')).toBe(full.get('prompts'));
    expect([...new URLSearchParams(back.search).keys()].sort()).toEqual([...full.keys()].sort());
    // The same content is the same key: a second address adds nothing.
    expect((await shortenAddress(full, store)).address).toBe(short.address);
    expect(store.size).toBe(2);
  });

  it('leaves a short config as it was', async () => {
    const full = configToUrlParams({ ...resolveConfig('grpo'), seed: 3 }, 'grpo');
    const short = await shortenAddress(full, new MemoryLinkStateStore());
    expect(short).toEqual({ address: full.toString(), stored: [] });
    // Known at once, without the store (the share box shows it in the same render as the edit).
    expect(inlineAddress(full)).toBe(full.toString());
    expect(inlineAddress(new URLSearchParams({ prompts: PROMPTS }))).toBeNull();
  });

  it('moves the longest values out until the address fits, even when each is under the inline limit', async () => {
    const full = new URLSearchParams({ preset: 'grpo' });
    for (let i = 0; i < 30; i++) full.set(`f${i}`, 'x'.repeat(MAX_INLINE_VALUE - 10));
    const short = await shortenAddress(full, new MemoryLinkStateStore());
    expect(short.address.length).toBeLessThanOrEqual(MAX_ADDRESS_CHARS);
    expect(short.stored.length).toBeGreaterThan(0);
  });

  it('a link whose kept values this browser lacks opens the rest and names what is missing', async () => {
    const store = new MemoryLinkStateStore();
    const short = await shortenAddress(
      new URLSearchParams({ preset: 'grpo', task: 'prompts', seed: '4', prompts: PROMPTS }),
      store,
    );
    const elsewhere = await expandLinkState(`?${short.address}&lesson=clip-zero`, new MemoryLinkStateStore());
    expect(elsewhere.missing).toEqual(['prompts']);
    const p = new URLSearchParams(elsewhere.search);
    expect([p.get('seed'), p.get('task'), p.get('lesson'), p.get('prompts'), p.get('ref.prompts')]).toEqual([
      '4',
      'prompts',
      'clip-zero',
      null,
      null,
    ]);
  });

  it('a reference that is not a hash, or names no field, is refused by name and never looked up', async () => {
    const looked: string[] = [];
    const store = new MemoryLinkStateStore();
    const get = store.get.bind(store);
    store.get = (k: string) => {
      looked.push(k);
      return get(k);
    };
    const r = await expandLinkState(`?ref.prompts=${'z'.repeat(5000)}&ref.=abc&seed=1`, store);
    expect(looked).toEqual([]);
    expect(r.missing).toEqual([]);
    expect(r.problems).toEqual([
      `ref.prompts: not a stored value's reference (32 hex digits), got "${'z'.repeat(80)}"... (5000 characters)`,
      'ref.: names no field',
    ]);
    expect(new URLSearchParams(r.search).get('seed')).toBe('1');
  });
});
