// The hub origins the page may connect to: every download host the Hub is recorded to redirect to
// (fixtures/hub-hosts.json, with its sources) is allowed and look-alikes are not, CSP host matching as browsers do
// it (scheme, subdomain depth, default ports), the extra origins of a build checked entry by entry, and the CSP
// directive they are written into.
import { describe, expect, it } from 'vitest';
import hosts from './fixtures/hub-hosts.json';
import { DEFAULT_HUB_ENDPOINT } from './hub-id';
import {
  HUB_CONNECT_SOURCES,
  hubConnectSources,
  hubSourcesAllow,
  pageHubSources,
  parseExtraHubOrigins,
  sourceMatches,
  withHubConnectSources,
} from './hub-origins';

describe('hub origins', () => {
  it('allow the Hub and every download host it is recorded to redirect to, over https only', () => {
    expect(hosts.endpoint.value).toBe(DEFAULT_HUB_ENDPOINT);
    expect(hubSourcesAllow(HUB_CONNECT_SOURCES, `${DEFAULT_HUB_ENDPOINT}/org/name/resolve/main/config.json`)).toBe(
      true,
    );
    for (const { host, sources } of hosts.redirectHosts) {
      expect(sources.length, host).toBeGreaterThan(0);
      expect(hubSourcesAllow(HUB_CONNECT_SOURCES, `https://${host}/xet-bridge-us/abc?X-Amz-Signature=1`), host).toBe(
        true,
      );
      expect(hubSourcesAllow(HUB_CONNECT_SOURCES, `http://${host}/file`), `http://${host}`).toBe(false);
      expect(hubSourcesAllow(HUB_CONNECT_SOURCES, `https://${host}:8443/file`), `${host}:8443`).toBe(false);
    }
  });

  it('refuse look-alikes, the bare short domain, other hosts and what is no URL', () => {
    for (const host of hosts.notHub) expect(hubSourcesAllow(HUB_CONNECT_SOURCES, `https://${host}/`), host).toBe(false);
    expect(hubSourcesAllow(HUB_CONNECT_SOURCES, 'https://hf.co/')).toBe(false);
    expect(hubSourcesAllow(HUB_CONNECT_SOURCES, 'https://xhuggingface.co/')).toBe(false);
    expect(hubSourcesAllow(HUB_CONNECT_SOURCES, 'not a url')).toBe(false);
    expect(hubSourcesAllow(HUB_CONNECT_SOURCES, 'data:text/plain,x')).toBe(false);
  });

  it('match hosts as CSP does: exact host and port, `*.` any depth of subdomain, default ports', () => {
    expect(sourceMatches('https://*.hf.co', new URL('https://a.b.c.hf.co/x'))).toBe(true);
    expect(sourceMatches('https://*.hf.co', new URL('https://hf.co/x'))).toBe(false);
    expect(sourceMatches('https://huggingface.co', new URL('https://HUGGINGFACE.CO:443/x'))).toBe(true);
    expect(sourceMatches('http://127.0.0.1:4311', new URL('http://127.0.0.1:4311/a'))).toBe(true);
    expect(sourceMatches('http://127.0.0.1:4311', new URL('http://127.0.0.1:4312/a'))).toBe(false);
    expect(sourceMatches('http://127.0.0.1:80', new URL('http://127.0.0.1/a'))).toBe(true);
    expect(sourceMatches("'self'", new URL('https://huggingface.co/'))).toBe(false);
  });

  it('take extra origins from the build variable: origins alone, written as URL spells them, once each', () => {
    expect(parseExtraHubOrigins(undefined)).toEqual([]);
    expect(parseExtraHubOrigins(' http://127.0.0.1:4311/ ,HTTPS://Mirror.Example.org,http://127.0.0.1:4311,')).toEqual([
      'http://127.0.0.1:4311',
      'https://mirror.example.org',
    ]);
    expect(hubConnectSources(['http://127.0.0.1:4311', DEFAULT_HUB_ENDPOINT])).toEqual([
      ...HUB_CONNECT_SOURCES,
      'http://127.0.0.1:4311',
    ]);
    const bad: [string, string][] = [
      ['https://*.example.org', 'must name one origin, without a wildcard'],
      ['127.0.0.1:4311', 'is not a URL'],
      ['ftp://mirror.example.org', 'must be an http or https origin'],
      ['https://mirror.example.org/hub', 'must be an origin alone'],
      ['https://user@mirror.example.org', 'must be an origin alone'],
      ['https://mirror.example.org/?q=1', 'must be an origin alone'],
      ['http://', 'is not a URL'],
    ];
    for (const [value, why] of bad)
      expect(() => parseExtraHubOrigins(value), value).toThrow(
        `RL_LAB_EXTRA_HUB_ORIGINS: ${JSON.stringify(value)} ${why}`,
      );
  });

  it("are the page's: the Hub's sources at least, in the order the CSP lists them", () => {
    expect(pageHubSources().slice(0, HUB_CONNECT_SOURCES.length)).toEqual(HUB_CONNECT_SOURCES);
  });

  it('are written into connect-src after the page’s own sources, and a page without connect-src fails the build', () => {
    const page =
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'; connect-src 'self' blob:; img-src 'self'\" />";
    expect(withHubConnectSources(page, ['https://huggingface.co', 'http://127.0.0.1:4311'])).toContain(
      "connect-src 'self' blob: https://huggingface.co http://127.0.0.1:4311; img-src 'self'",
    );
    const last = '<meta http-equiv="Content-Security-Policy" content="default-src \'self\'; connect-src \'self\'" />';
    expect(withHubConnectSources(last, ['https://huggingface.co'])).toContain(
      `connect-src 'self' https://huggingface.co"`,
    );
    expect(() => withHubConnectSources('<meta content="default-src \'self\'">', ['https://huggingface.co'])).toThrow(
      'index.html has no connect-src directive',
    );
  });
});
