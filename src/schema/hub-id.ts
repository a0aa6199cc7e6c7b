// A model on a Hugging Face-style hub as a run names it: `org/name` or `org/name@revision`, checked character by
// character before it is put in a URL or a cache path (it never reaches a shell), and the endpoint it is fetched
// from (the Hugging Face Hub unless one is given). Pure string and URL work: the CLI and the page share it.

/** A validated hub model id. */
export interface HubRepo {
  org: string;
  name: string;
  /** The branch, tag or commit asked for; `main` when the id names none. */
  revision: string;
  /** `org/name`. */
  id: string;
}

/** A hub id, endpoint or revision that cannot be used; the message names the value and the rule. */
export class HubIdError extends Error {
  override name = 'HubIdError';
}

export const DEFAULT_REVISION = 'main';

/** The hub an id is fetched from when no endpoint is given (as huggingface_hub's and transformers.js's default). */
export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';

/** One part of an id: letters, digits, `-`, `_`, `.`; starts with a letter or digit; no `..`; at most 96 characters. */
const PART = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/;
/** A revision: letters, digits, `-`, `_`, `.`; starts with a letter or digit; no `..`; at most 128 characters. */
const REVISION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** A commit hash, as X-Repo-Commit carries it. */
export const COMMIT = /^[0-9a-f]{40}$/;

const partProblem = (what: string, part: string): string | null =>
  !PART.test(part)
    ? `${what} ${JSON.stringify(part.slice(0, 100))} must be 1 to 96 letters, digits, '-', '_' or '.', starting with a letter or digit`
    : part.includes('..') || part.endsWith('.')
      ? `${what} ${JSON.stringify(part)} must not hold '..' or end with '.'`
      : null;

/** True when `value` has the shape of a hub id (`org/name`, optional `@revision`), valid or not in its characters. */
export function looksLikeHubId(value: string): boolean {
  return /^[^/\\.@][^/\\@]*\/[^/\\@]+(@[^/\\@]*)?$/.test(value);
}

/** Parses and checks `org/name[@revision]`; throws HubIdError naming the part that breaks the rule. */
export function parseHubId(value: string): HubRepo {
  const at = value.indexOf('@');
  const path = at < 0 ? value : value.slice(0, at);
  const revision = at < 0 ? DEFAULT_REVISION : value.slice(at + 1);
  const parts = path.split('/');
  if (parts.length !== 2)
    throw new HubIdError(`hub id ${JSON.stringify(value.slice(0, 200))} must be org/name[@revision]`);
  const [org, name] = parts;
  const problem = partProblem('the organisation', org) ?? partProblem('the model name', name);
  if (problem) throw new HubIdError(`hub id ${JSON.stringify(value.slice(0, 200))}: ${problem}`);
  if (!REVISION.test(revision) || revision.includes('..'))
    throw new HubIdError(
      `hub id ${JSON.stringify(value.slice(0, 200))}: the revision after '@' must be 1 to 128 letters, digits, '-', '_' or '.' (a branch, tag or commit), without '..'`,
    );
  return { org, name, revision, id: `${org}/${name}` };
}

/** The id as written back: `org/name`, with `@revision` unless it is `main`. */
export function hubIdText(repo: HubRepo): string {
  return repo.revision === DEFAULT_REVISION ? repo.id : `${repo.id}@${repo.revision}`;
}

/**
 * The endpoint's origin (`http(s)://host[:port]`), from a URL with no credentials, query or fragment; a path is
 * kept (a hub mounted under a prefix). Throws HubIdError naming the value.
 */
export function parseEndpoint(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new HubIdError(
      `hub endpoint ${JSON.stringify(value.slice(0, 200))} is not a URL (give http://host:port or https://host)`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new HubIdError(`hub endpoint ${JSON.stringify(value.slice(0, 200))} must be an http or https URL`);
  if (url.username || url.password || url.search || url.hash)
    throw new HubIdError(
      `hub endpoint ${url.origin} must carry no user, password, query or fragment (the token goes in HF_TOKEN)`,
    );
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

/** `{endpoint}/{org}/{name}/resolve/{revision}/{file}`: each path segment of `file` percent-encoded. */
export function resolveUrl(endpoint: URL, repo: HubRepo, file: string, revision = repo.revision): URL {
  const segments = file.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..'))
    throw new HubIdError(`file ${JSON.stringify(file)} must be a relative path without empty, '.' or '..' parts`);
  const path = [repo.org, repo.name, 'resolve', revision, ...segments].map(encodeURIComponent).join('/');
  return new URL(path, endpoint);
}
