// The one list of places the page may fetch hub models from: the Hugging Face Hub's own origin and the hosts its
// resolve URLs redirect downloads to, plus the origins a build adds for a mirror or the tests' mock hub
// (RL_LAB_EXTRA_HUB_ORIGINS). vite.config.ts writes this list into index.html's Content-Security-Policy
// (connect-src) and into the bundle (__RL_LAB_EXTRA_HUB_ORIGINS__), so the page's origin check and the CSP the
// browser enforces come from the same values. The redirect hosts, with their sources: src/schema/fixtures/hub-hosts.json.
// Pure string and URL work: the page, the build and the tests share it.

import { DEFAULT_HUB_ENDPOINT } from './hub-id';

/**
 * The Hub's connect sources: its origin, and its download hosts, all subdomains of its own two domains (LFS CDNs
 * such as cdn-lfs-us-1.hf.co and cdn-lfs.huggingface.co, the Xet bridge cas-bridge.xethub.hf.co, regional
 * *.cdn.hf.co hosts). A CSP `*.` source matches subdomains at any depth, never the bare domain, never another scheme.
 */
export const HUB_CONNECT_SOURCES: readonly string[] = [
  DEFAULT_HUB_ENDPOINT,
  'https://*.huggingface.co',
  'https://*.hf.co',
];

/** The build-time variable of extra origins, comma-separated: `http://127.0.0.1:4311,https://hub.example.org`. */
export const EXTRA_HUB_ORIGINS_VAR = 'RL_LAB_EXTRA_HUB_ORIGINS';

/**
 * The variable of a hub download's timeout in seconds (SETTINGS.hub_timeout): read by the CLIs at run time, and by
 * the page's build (scripts/hub-origins-plugin.ts) for its engine worker.
 */
export const HUB_TIMEOUT_VAR = 'RL_LAB_HUB_TIMEOUT';

/** Set by vite.config.ts (define) to this build's extra origins; absent outside a Vite build (the CLI). */
declare const __RL_LAB_EXTRA_HUB_ORIGINS__: readonly string[] | undefined;

/** An extra origin or list that cannot be used; the message names the value and the rule. */
export class HubOriginError extends Error {
  override name = 'HubOriginError';
}

/**
 * The origins of RL_LAB_EXTRA_HUB_ORIGINS: each an http(s) origin alone (no path, query, wildcard or user), written
 * back as `URL.origin` spells it. Throws HubOriginError naming the bad entry.
 */
export function parseExtraHubOrigins(value: string | undefined): string[] {
  const out: string[] = [];
  for (const entry of (value ?? '').split(',').map((s) => s.trim())) {
    if (entry === '') continue;
    const bad = (why: string) =>
      new HubOriginError(`${EXTRA_HUB_ORIGINS_VAR}: ${JSON.stringify(entry.slice(0, 200))} ${why}`);
    if (entry.includes('*')) throw bad('must name one origin, without a wildcard');
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw bad('is not a URL (give http://host:port or https://host)');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('must be an http or https origin');
    if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== ''))
      throw bad('must be an origin alone: scheme, host and port, with no path, query or user');
    if (!out.includes(url.origin)) out.push(url.origin);
  }
  return out;
}

/** The connect sources of a build: the Hub's, then the extra origins. */
export function hubConnectSources(extra: readonly string[]): string[] {
  return [...HUB_CONNECT_SOURCES, ...extra.filter((o) => !HUB_CONNECT_SOURCES.includes(o))];
}

/** The connect sources this page was built with (the Hub's alone outside a Vite build). */
export function pageHubSources(): string[] {
  return hubConnectSources(typeof __RL_LAB_EXTRA_HUB_ORIGINS__ === 'undefined' ? [] : __RL_LAB_EXTRA_HUB_ORIGINS__);
}

const defaultPort = (protocol: string) => (protocol === 'https:' ? '443' : protocol === 'http:' ? '80' : '');

/** Whether one CSP host source (`https://host[:port]` or `https://*.domain`) matches `url`, as browsers match it. */
export function sourceMatches(source: string, url: URL): boolean {
  const m = /^(https?):\/\/(\*\.)?([^/:]+)(?::(\d+))?$/.exec(source);
  if (!m) return false;
  const [, scheme, wildcard, host, port] = m;
  if (url.protocol !== `${scheme}:`) return false;
  const hostname = url.hostname.toLowerCase();
  const hostOk = wildcard ? hostname.endsWith(`.${host.toLowerCase()}`) : hostname === host.toLowerCase();
  return hostOk && (url.port || defaultPort(url.protocol)) === (port ?? defaultPort(url.protocol));
}

/** Whether the page may connect to `url` (a URL or an origin) under `sources`; an unparsable value is never allowed. */
export function hubSourcesAllow(sources: readonly string[], url: string | URL): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return sources.some((s) => sourceMatches(s, u));
}

/**
 * `html` with `sources` added to its CSP's connect-src (after the page's own sources). Throws when the page has
 * no connect-src to add them to, so a changed index.html fails the build instead of shipping without them.
 */
export function withHubConnectSources(html: string, sources: readonly string[]): string {
  const directive = /(connect-src [^;"]*?)(\s*[;"])/;
  if (!directive.test(html)) throw new Error('index.html has no connect-src directive to add the hub origins to');
  return html.replace(directive, (_, list: string, end: string) => `${list} ${sources.join(' ')}${end}`);
}
