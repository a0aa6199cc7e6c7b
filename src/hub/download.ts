// Fetching one file of a hub model, as huggingface_hub does (file_download.py at ee0a4510, get_hf_file_metadata and
// http_get): a HEAD of `{endpoint}/{org}/{name}/resolve/{rev}/{file}` without following redirects reads the commit
// (X-Repo-Commit), the size (X-Linked-Size, else Content-Length) and the hash (X-Linked-Etag, else ETag: a SHA-256
// for large files) and where the bytes are (Location, a CDN); the GET goes there with `Range: bytes=N-` after the N
// bytes a cut download left, and restarts from 0 when the server ignores the Range (200). The token goes only to
// the endpoint's origin: a redirect to another origin is followed without it (as huggingface_hub drops
// `authorization` when the CDN's netloc differs). The bytes land in a PartialFile (`<file>.incomplete`) the caller
// supplies, are checked for size and hash, and only then committed. No Node: fetch and the storage are injected.

import { resolveUrl, type HubRepo } from '../schema/hub-id';
import { hubSourcesAllow } from '../schema/hub-origins';

/** A download that failed; the message names the model, the file, the host or the HTTP status. */
export class HubError extends Error {
  override name = 'HubError';
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** Where one file's bytes are written: `<file>.incomplete` until commit() renames it into place. */
export interface PartialFile {
  /** Bytes already in the partial file (0 when there is none). */
  size(): Promise<number>;
  append(chunk: Uint8Array): Promise<void>;
  /** Empties the partial file (a server that ignored the Range). */
  truncate(): Promise<void>;
  /** Lowercase hex SHA-256 of the partial file's bytes. */
  sha256(): Promise<string>;
  /** Renames the partial file to its final name, atomically. */
  commit(): Promise<void>;
  /** Removes the partial file. */
  discard(): Promise<void>;
}

/** How to reach the hub: its endpoint, the person's token (sent to the endpoint's origin only) and fetch. */
export interface HubClient {
  endpoint: URL;
  token: string | null;
  fetch: typeof fetch;
  /** Tries of one file's GET after a connection dropped mid-file (each resumes with Range); default 4. */
  attempts?: number;
  /**
   * The connect sources it may reach (the page's: pageHubSources(), its CSP's list); a URL outside them is refused
   * naming its origin and the list, before any request. Absent: any origin (the CLI has no CSP).
   */
  sources?: readonly string[];
}

/** What a HEAD of a file's resolve URL says. */
export interface FileMeta {
  /** The commit the revision resolved to (X-Repo-Commit), or null when the hub sent none. */
  commit: string | null;
  /** Bytes of the file (X-Linked-Size, else Content-Length), or null. */
  size: number | null;
  /** Lowercase hex SHA-256 of the file when its ETag is one (large files), else null. */
  sha256: string | null;
  /** The URL to GET: the resolve URL, or the (absolute) redirect target it named. */
  location: URL;
}

const MAX_REDIRECTS = 5;

/** Headers for a request to `url`: the token only when `url` is on the endpoint's origin. */
export function requestHeaders(client: HubClient, url: URL, extra: Record<string, string> = {}): Headers {
  const h = new Headers(extra);
  if (client.token && url.origin === client.endpoint.origin) h.set('Authorization', `Bearer ${client.token}`);
  return h;
}

const where = (repo: HubRepo, file: string, revision: string) => `${file} of ${repo.id} at revision ${revision}`;

/** The error a non-success status means, in the person's words. */
export function statusError(res: Response, repo: HubRepo, file: string, revision: string, hadToken: boolean): HubError {
  const code = res.headers.get('X-Error-Code');
  const s = res.status;
  if (s === 401 || s === 403)
    return new HubError(
      hadToken
        ? `${repo.id} refused HF_TOKEN (${s}${code ? ` ${code}` : ''}) for ${file}: the token has no access to this gated or private model (accept its terms on the hub, or use a token that has access)`
        : `this model is gated or private: set HF_TOKEN (${repo.id} answered ${s}${code ? ` ${code}` : ''} for ${file})`,
      s,
    );
  if (s === 404) {
    if (code === 'RepoNotFound') return new HubError(`no model ${repo.id} on the hub (404 RepoNotFound)`, s);
    if (code === 'RevisionNotFound') return new HubError(`${repo.id} has no revision ${revision} (404)`, s);
    return new HubError(`${where(repo, file, revision)} does not exist (404${code ? ` ${code}` : ''})`, s);
  }
  if (s === 416) return new HubError(`${where(repo, file, revision)}: the server refused the byte range (416)`, s);
  return new HubError(`${where(repo, file, revision)}: the hub answered ${s} ${res.statusText}`.trim(), s);
}

/** fetch, with a network failure (offline, DNS, refused) named by its host; an origin outside `sources` refused. */
async function send(client: HubClient, url: URL, init: RequestInit): Promise<Response> {
  if (client.sources && !hubSourcesAllow(client.sources, url))
    throw new HubError(
      `${url.origin} is not a hub origin this page may connect to (it allows ${client.sources.join(', ')}); a mirror's origin is added at build with RL_LAB_EXTRA_HUB_ORIGINS`,
    );
  try {
    return await client.fetch(url, { ...init, redirect: 'manual' });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (e as Error).message;
    throw new HubError(`cannot reach ${url.host} (${why}): check the network and the hub endpoint`);
  }
}

const intHeader = (res: Response, name: string): number | null => {
  const v = res.headers.get(name);
  return v !== null && /^\d+$/.test(v) ? Number(v) : null;
};

/** An ETag that is a SHA-256 (quotes and a weak `W/` removed), or null. */
export function sha256OfEtag(etag: string | null): string | null {
  const v = etag?.replace(/^W\//, '').replace(/"/g, '').toLowerCase() ?? '';
  return /^[0-9a-f]{64}$/.test(v) ? v : null;
}

/**
 * HEAD of a file's resolve URL: redirects on the endpoint's own origin (a renamed repo) are followed with the
 * token; the first one to another origin is where the bytes are, and is not contacted here.
 */
export async function fileMeta(
  client: HubClient,
  repo: HubRepo,
  file: string,
  revision = repo.revision,
): Promise<FileMeta> {
  let url = resolveUrl(client.endpoint, repo, file, revision);
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const res = await send(client, url, { method: 'HEAD', headers: requestHeaders(client, url) });
    const commit = res.headers.get('X-Repo-Commit');
    const size = intHeader(res, 'X-Linked-Size') ?? intHeader(res, 'Content-Length');
    const sha256 = sha256OfEtag(res.headers.get('X-Linked-Etag') ?? res.headers.get('ETag'));
    if (res.status >= 300 && res.status < 400) {
      const loc = res.headers.get('Location');
      if (!loc) throw new HubError(`${where(repo, file, revision)}: a ${res.status} redirect without a Location`);
      const next = redirectTarget(url, loc, repo, file, revision);
      if (next.origin !== client.endpoint.origin) return { commit, size, sha256, location: next };
      url = next;
      continue;
    }
    if (!res.ok) throw statusError(res, repo, file, revision, Boolean(client.token));
    return { commit, size, sha256, location: url };
  }
  throw new HubError(`${where(repo, file, revision)}: more than ${MAX_REDIRECTS} redirects`);
}

/** Where a redirect's Location points, from `from`; only http(s) is followed. */
function redirectTarget(from: URL, location: string, repo: HubRepo, file: string, revision: string): URL {
  const next = new URL(location, from);
  if (next.protocol !== 'https:' && next.protocol !== 'http:')
    throw new HubError(`${where(repo, file, revision)}: a redirect to a ${next.protocol} URL is not followed`);
  return next;
}

/** Progress of one file: bytes held and the total when known. */
export type Progress = (file: string, bytes: number, total: number | null) => void;

/**
 * Downloads `file` (its HEAD already read as `meta`) into `partial`, resuming after the bytes it holds, and commits
 * it once its size and (when known) SHA-256 match. A connection dropped mid-file is resumed with Range up to
 * `client.attempts` times; when they run out the partial file is kept for the next run. More bytes than the size,
 * or a hash that differs, discard the partial file (its bytes are wrong) and throw naming the file.
 */
export async function downloadFile(
  client: HubClient,
  repo: HubRepo,
  file: string,
  revision: string,
  meta: FileMeta,
  partial: PartialFile,
  progress?: Progress,
): Promise<void> {
  const attempts = client.attempts ?? 4;
  const expected = meta.size;
  let lastError = '';
  for (let attempt = 0; attempt < attempts; attempt++) {
    let have = await partial.size();
    if (expected !== null && have > expected) {
      await partial.discard();
      throw new HubError(
        `${where(repo, file, revision)}: the partial download holds ${have} bytes but the file has ${expected}; removed it, run again`,
      );
    }
    if (expected === null || have < expected) {
      const range: Record<string, string> = have > 0 ? { Range: `bytes=${have}-` } : {};
      let url = meta.location;
      let res = await send(client, url, { method: 'GET', headers: requestHeaders(client, url, range) });
      // Redirects are followed (a renamed repo on the endpoint, its CDN), the token only ever to the endpoint's origin.
      for (let hop = 0; res.status >= 300 && res.status < 400; hop++) {
        const loc = res.headers.get('Location');
        if (!loc || hop >= MAX_REDIRECTS)
          throw new HubError(
            `${where(repo, file, revision)}: ${loc ? `more than ${MAX_REDIRECTS} redirects` : `a ${res.status} redirect without a Location`}`,
          );
        // Only the endpoint's own redirects are followed: the CDN it names is the one other origin contacted.
        if (url.origin !== client.endpoint.origin)
          throw new HubError(
            `${where(repo, file, revision)}: ${url.origin} redirected to ${new URL(loc, url).origin}; only the endpoint's redirects are followed`,
          );
        url = redirectTarget(url, loc, repo, file, revision);
        res = await send(client, url, { method: 'GET', headers: requestHeaders(client, url, range) });
      }
      if (!res.ok)
        throw statusError(res, repo, file, revision, Boolean(client.token) && url.origin === client.endpoint.origin);
      if (have > 0 && res.status === 200) {
        // The server ignored the Range: the whole file again, from the start.
        await partial.truncate();
        have = 0;
      } else if (res.status === 206) {
        const start = /^bytes (\d+)-/.exec(res.headers.get('Content-Range') ?? '')?.[1];
        if (start === undefined || Number(start) !== have) {
          await res.body?.cancel();
          throw new HubError(
            `${where(repo, file, revision)}: asked for bytes from ${have}, got ${res.headers.get('Content-Range')}`,
          );
        }
      }
      try {
        if (res.body) {
          const reader = res.body.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            await partial.append(value);
            have += value.length;
            progress?.(file, have, expected);
          }
        }
      } catch (e) {
        // The connection dropped mid-file: what arrived is kept; the next attempt resumes after it.
        lastError = (e as Error).message;
        continue;
      }
      if (expected === null) have = await partial.size();
      else if (have < expected) {
        lastError = `the response ended at byte ${have}`;
        continue;
      }
    }
    return verifyAndCommit(repo, file, revision, meta, partial);
  }
  const have = await partial.size();
  throw new HubError(
    `${where(repo, file, revision)}: the download stopped at ${have} of ${expected ?? '?'} bytes after ${attempts} tries (${lastError}); the partial file is kept, run again to resume`,
  );
}

async function verifyAndCommit(repo: HubRepo, file: string, revision: string, meta: FileMeta, partial: PartialFile) {
  const have = await partial.size();
  if (meta.size !== null && have !== meta.size) {
    await partial.discard();
    throw new HubError(
      `${where(repo, file, revision)}: got ${have} bytes but the hub says ${meta.size}; removed the download`,
    );
  }
  if (meta.sha256 !== null) {
    const got = await partial.sha256();
    if (got !== meta.sha256) {
      await partial.discard();
      throw new HubError(
        `${where(repo, file, revision)}: SHA-256 ${got} differs from the hub's ${meta.sha256}; removed the download`,
      );
    }
  }
  await partial.commit();
}
