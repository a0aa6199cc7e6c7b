// The page's Content-Security-Policy (index.html): connections only to its own origin and the blob:/data: URLs it
// makes, scripts only its own and its blob: URLs (the reward sandbox's; WebAssembly allowed, no eval, no inline
// script), workers its own or blob:, no
// plugins; and the dev server's additions (inline refresh preamble, hot-reload socket) stay out of the built page.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const html = readFileSync(new URL('../index.html', import.meta.url), 'utf8');

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

  it("connects only to the page's own origin and its blob:/data: URLs", () => {
    expect(p['connect-src']).toEqual(["'self'", 'blob:', 'data:']);
    expect(p['default-src']).toEqual(["'self'"]);
  });

  it("runs only the page's own scripts (and its blob: URLs, for the reward sandbox) and workers, WebAssembly allowed", () => {
    expect(p['script-src']).toEqual(["'self'", "'wasm-unsafe-eval'", 'blob:']);
    expect(p['script-src']).not.toContain("'unsafe-eval'");
    expect(p['script-src']).not.toContain("'unsafe-inline'");
    expect(p['worker-src']).toEqual(["'self'", 'blob:']);
    expect(p['object-src']).toEqual(["'none'"]);
  });

  it('names no other origin anywhere', () => {
    for (const sources of Object.values(p)) for (const s of sources) expect(s).toMatch(/^('[a-z-]+'|blob:|data:)$/);
  });

  it("sits before the page's script, so it governs it", () => {
    expect(html.indexOf('Content-Security-Policy')).toBeLessThan(html.indexOf('<script'));
  });
});
