// Hub ids, endpoints and resolve URLs: what is accepted, what is refused by name, and that nothing in an id can
// leave its path segment.

import { describe, expect, it } from 'vitest';
import { HubIdError, hubIdText, looksLikeHubId, parseEndpoint, parseHubId, resolveUrl } from './hub-id';
import { requestHeaders, sha256OfEtag } from '../hub/download';

describe('hub ids', () => {
  it('reads org/name and org/name@revision', () => {
    expect(parseHubId('HuggingFaceTB/SmolLM2-135M')).toEqual({
      org: 'HuggingFaceTB',
      name: 'SmolLM2-135M',
      revision: 'main',
      id: 'HuggingFaceTB/SmolLM2-135M',
    });
    const r = parseHubId('Qwen/Qwen2.5-0.5B@v1.0_rc-2');
    expect([r.id, r.revision, hubIdText(r)]).toEqual(['Qwen/Qwen2.5-0.5B', 'v1.0_rc-2', 'Qwen/Qwen2.5-0.5B@v1.0_rc-2']);
  });

  it.each([
    ['org/../etc', 'org/name[@revision]'],
    ['../x/y', 'org/name[@revision]'],
    ['org/..', 'model name'],
    ['../name', 'organisation'],
    ['org/na..me', "'..'"],
    ['org/name/extra', 'org/name[@revision]'],
    ['org/$(touch x)', 'model name'],
    ['org/`id`', 'model name'],
    ['org/na me', 'model name'],
    ['org/name\n', 'model name'],
    ['org/name@../main', 'revision'],
    ['org/name@a/b', 'revision'],
    ['org/name@', 'revision'],
    ['org/name@ma;in', 'revision'],
    [`org/${'a'.repeat(97)}`, 'model name'],
    ['-org/name', 'organisation'],
  ])('refuses %j naming the %s', (value, part) => {
    expect(() => parseHubId(value)).toThrow(HubIdError);
    expect(() => parseHubId(value)).toThrow(part);
  });

  it('tells an id from a path by its shape', () => {
    for (const v of ['org/name', 'org/name@main', 'a.b/c-d_e']) expect(looksLikeHubId(v), v).toBe(true);
    for (const v of ['/abs/path', './org/name', '../org/name', 'checkpoints/a/b', 'copy', 'C:\\x\\y', '.hidden/x'])
      expect(looksLikeHubId(v), v).toBe(false);
  });
});

describe('endpoints and resolve URLs', () => {
  it('builds {endpoint}/{org}/{name}/resolve/{revision}/{file}, each segment encoded', () => {
    const ep = parseEndpoint('http://127.0.0.1:8080');
    const repo = parseHubId('org/name@v2');
    expect(resolveUrl(ep, repo, 'onnx/model.onnx').href).toBe(
      'http://127.0.0.1:8080/org/name/resolve/v2/onnx/model.onnx',
    );
    expect(resolveUrl(ep, repo, 'a b#?.json').href).toBe('http://127.0.0.1:8080/org/name/resolve/v2/a%20b%23%3F.json');
    expect(resolveUrl(parseEndpoint('https://mirror.example/hub'), repo, 'config.json').href).toBe(
      'https://mirror.example/hub/org/name/resolve/v2/config.json',
    );
    expect(() => resolveUrl(ep, repo, '../x')).toThrow("'..'");
  });

  it('refuses an endpoint that is not http(s) or that carries credentials', () => {
    expect(() => parseEndpoint('file:///etc')).toThrow('http or https');
    expect(() => parseEndpoint('not a url')).toThrow('is not a URL');
    expect(() => parseEndpoint('https://user:secret@host')).toThrow('no user, password');
    expect(() => parseEndpoint('https://host/?token=x')).toThrow('no user, password');
  });

  it("sends the token to the endpoint's origin only", () => {
    const client = { endpoint: parseEndpoint('http://127.0.0.1:1'), token: 'hf_secret', fetch };
    expect(requestHeaders(client, new URL('http://127.0.0.1:1/a')).get('Authorization')).toBe('Bearer hf_secret');
    expect(requestHeaders(client, new URL('http://127.0.0.1:2/a')).get('Authorization')).toBeNull();
    expect(requestHeaders(client, new URL('https://127.0.0.1:1/a')).get('Authorization')).toBeNull();
  });

  it('reads a SHA-256 from an ETag, and nothing from a git SHA-1', () => {
    const h = 'ab'.repeat(32);
    expect(sha256OfEtag(`"${h}"`)).toBe(h);
    expect(sha256OfEtag(`W/"${h.toUpperCase()}"`)).toBe(h);
    expect(sha256OfEtag(`"${'ab'.repeat(20)}"`)).toBeNull();
    expect(sha256OfEtag(null)).toBeNull();
  });
});
