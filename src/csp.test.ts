// The page's Content-Security-Policy (index.html, as the build writes it): connections only to its own origin, the
// blob:/data: URLs it makes and the hub origins of src/schema/hub-origins.ts (the Hugging Face Hub and its download hosts,
// plus a build's RL_LAB_EXTRA_HUB_ORIGINS), scripts only its own and its blob: URLs (the reward sandbox's;
// WebAssembly allowed, no eval, no inline script), workers its own or blob:, no plugins; and the dev server's
// additions (inline refresh preamble, hot-reload socket) stay out of the built page.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Plugin } from 'vite';
import { hubOriginsPlugin } from '../scripts/hub-origins-plugin';
import { HUB_CONNECT_SOURCES, pageHubSources } from './schema/hub-origins';

const source = readFileSync(new URL('../index.html', import.meta.url), 'utf8');

/** index.html as the build writes it with `env` (the hub-origins plugin's transform, as Vite runs it). */
function built(env: Record<string, string | undefined>): string {
  const hook = hubOriginsPlugin(env).transformIndexHtml as { handler: (html: string) => string };
  return hook.handler(source);
}

const html = built({});

/** The directives of the page's CSP meta tag, each as its list of sources. */
function policy(page: string): Record<string, string[]> {
  const m = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(page);
  if (!m) throw new Error('index.html has no Content-Security-Policy meta tag');
  return Object.fromEntries(
    m[1]
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...sources]) => [name, sources]),
  );
}

describe('Content-Security-Policy', () => {
  const p = policy(html);

  it("connects only to the page's own origin, its blob:/data: URLs and the Hugging Face Hub's hosts", () => {
    expect(p['connect-src']).toEqual(["'self'", 'blob:', 'data:', ...HUB_CONNECT_SOURCES]);
    expect(HUB_CONNECT_SOURCES).toEqual(['https://huggingface.co', 'https://*.huggingface.co', 'https://*.hf.co']);
    expect(p['default-src']).toEqual(["'self'"]);
  });

  it('adds the extra hub origins of a build, and only to connect-src', () => {
    const extra = 'http://127.0.0.1:4311, http://127.0.0.1:4312/';
    const q = policy(built({ RL_LAB_EXTRA_HUB_ORIGINS: extra }));
    expect(q['connect-src']).toEqual([...p['connect-src'], 'http://127.0.0.1:4311', 'http://127.0.0.1:4312']);
    for (const [name, sources] of Object.entries(q)) if (name !== 'connect-src') expect(sources).toEqual(p[name]);
    expect(() => built({ RL_LAB_EXTRA_HUB_ORIGINS: 'https://*.example.org' })).toThrow(
      'RL_LAB_EXTRA_HUB_ORIGINS: "https://*.example.org" must name one origin, without a wildcard',
    );
  });

  it("agrees with the page's origin check: the sources the bundle holds are the ones the CSP names", () => {
    // Vitest runs the same vite.config.ts plugins as the build, with this process's environment.
    const q = policy(built(process.env));
    expect(q['connect-src'].slice(3)).toEqual(pageHubSources());
  });

  it("runs only the page's own scripts (and its blob: URLs, for the reward sandbox) and workers, WebAssembly allowed", () => {
    expect(p['script-src']).toEqual(["'self'", "'wasm-unsafe-eval'", 'blob:']);
    expect(p['script-src']).not.toContain("'unsafe-eval'");
    expect(p['script-src']).not.toContain("'unsafe-inline'");
    expect(p['worker-src']).toEqual(["'self'", 'blob:']);
    expect(p['object-src']).toEqual(["'none'"]);
  });

  it("names no other origin anywhere, and no wildcard but the hub's own domains", () => {
    for (const [name, sources] of Object.entries(p))
      for (const s of name === 'connect-src' ? sources.slice(3) : sources)
        if (name === 'connect-src') expect(s).toMatch(/^https:\/\/(\*\.)?(huggingface\.co|hf\.co)$/);
        else expect(s).toMatch(/^('[a-z-]+'|blob:|data:)$/);
    expect(p['connect-src'].filter((s) => s.includes('*'))).toEqual(['https://*.huggingface.co', 'https://*.hf.co']);
    // The source file holds the page's own sources alone: the hub's are added in one place, the build.
    expect(policy(source)['connect-src']).toEqual(["'self'", 'blob:', 'data:']);
  });

  it('is the policy the build serves: vite.config.ts runs the plugin in build and dev alike', async () => {
    const config = (await import('../vite.config')).default as { plugins: Plugin[] };
    const plugin = config.plugins.flat().find((q) => q?.name === 'hub-origins');
    if (!plugin) throw new Error('vite.config.ts has no hub-origins plugin');
    expect(plugin.apply).toBeUndefined();
    expect((plugin.transformIndexHtml as { order: string }).order).toBe('pre');
  });

  it("sits before the page's script, so it governs it", () => {
    expect(html.indexOf('Content-Security-Policy')).toBeLessThan(html.indexOf('<script'));
  });
});
