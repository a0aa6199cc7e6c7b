// Fetching one file of a hub model, as huggingface_hub does (file_download.py at ee0a4510, get_hf_file_metadata and
// http_get): a HEAD of `{endpoint}/{org}/{name}/resolve/{rev}/{file}` without following redirects reads the commit
// (X-Repo-Commit), the size (X-Linked-Size, else Content-Length) and the hash (X-Linked-Etag, else ETag: a SHA-256
// for large files) and where the bytes are (Location, a CDN); the GET goes there with `Range: bytes=N-` after the N
// bytes a cut download left, and restarts from 0 when the server ignores the Range (200). The token goes only to
// the endpoint's origin: a redirect to another origin is followed without it (as huggingface_hub drops
// `authorization` when the CDN's netloc differs). The bytes land in a PartialFile (`<file>.incomplete`) the caller
// supplies, are checked for size and hash, and only then committed. No Node: fetch and the storage are injected.
// One transfer policy (TransferPolicy) holds every request, in the CLI and the page alike: a response's headers
// must come within headersTimeoutMs and each chunk of its body within idleTimeoutMs (past either the request is
// cut, naming the host and the file); a cut GET resumes with Range at most `resumes` times, after a back-off the
// caller is told about (onRetry); the body may never pass the announced size (the transfer stops the moment it
// would, and the partial file is removed); a body with a Content-Encoding is refused before a byte is kept (the
// announced size and hash are of the file itself); a file announced as 0 bytes with a hash that is not the empty
// file's is refused naming what the hub announced.

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

/** How long a transfer may wait and how often it resumes; every field has a default (DEFAULT_TRANSFER_POLICY). */
export interface TransferPolicy {
  /** Milliseconds from a request to its response's headers (connecting included) before it is cut. */
  headersTimeoutMs: number;
  /** Milliseconds without a byte of a body before the transfer is cut. */
  idleTimeoutMs: number;
  /** Times a cut GET is resumed with Range (so resumes + 1 tries in all). */
  resumes: number;
  /** Milliseconds before the first resume; each next one waits twice as long, up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Bytes a file whose size the hub did not announce may have (its cap, where the announced size is the cap). */
  maxUnannouncedBytes: number;
}

export const DEFAULT_TRANSFER_POLICY: TransferPolicy = {
  headersTimeoutMs: 30_000,
  idleTimeoutMs: 30_000,
  resumes: 3,
  backoffMs: 1000,
  maxBackoffMs: 8000,
  maxUnannouncedBytes: 256 << 20,
};

/**
 * The transfer policy a hub_timeout setting (src/schema/config/schema.ts's SETTINGS; RL_LAB_HUB_TIMEOUT) gives:
 * its seconds as both the headers and the idle timeout. Absent or empty: the defaults; anything but a positive
 * number of seconds (at most an hour) is refused naming the variable.
 */
export function transferOfTimeoutSetting(text: string | undefined, name: string): Partial<TransferPolicy> {
  if (text === undefined || text.trim() === '') return {};
  const s = Number(text);
  if (!/^\s*\d+(\.\d+)?\s*$/.test(text) || !(s > 0) || s > 3600)
    throw new HubError(`${name}: ${JSON.stringify(text.slice(0, 40))} is not a number of seconds between 0 and 3600`);
  return { headersTimeoutMs: Math.round(s * 1000), idleTimeoutMs: Math.round(s * 1000) };
}

/** The policy of a client: its own fields over the defaults. */
export const transferPolicy = (client: Pick<HubClient, 'transfer'>): TransferPolicy => ({
  ...DEFAULT_TRANSFER_POLICY,
  ...client.transfer,
});

/** What a download is doing when it is not simply receiving: no data for a while, or waiting to resume. */
export type TransferNotice =
  | { kind: 'stalled'; file: string; host: string; silentMs: number }
  | {
      kind: 'retrying';
      file: string;
      /** This resume's number (1..resumes) and how many there may be. */
      retry: number;
      retries: number;
      /** Milliseconds of back-off before it; bytes kept it resumes after. */
      waitMs: number;
      bytes: number;
      /** Why the last try stopped, in words. */
      reason: string;
    };

/** Seconds in words: "30 s", "1.5 s", "0.05 s". */
export const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(ms < 1000 ? 2 : 1))} s`;

/** How to reach the hub: its endpoint, the person's token (sent to the endpoint's origin only) and fetch. */
export interface HubClient {
  endpoint: URL;
  token: string | null;
  fetch: typeof fetch;
  /** Timeouts, resumes and caps; absent fields take DEFAULT_TRANSFER_POLICY's. */
  transfer?: Partial<TransferPolicy>;
  /** Stops every request of this client (the page's cancel). */
  signal?: AbortSignal;
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

/**
 * Headers for a request to `url`: the token only when `url` is on the endpoint's origin; `Accept-Encoding: identity`
 * (as huggingface_hub sends: sizes and hashes are of the file itself; a browser keeps its own value).
 */
export function requestHeaders(client: HubClient, url: URL, extra: Record<string, string> = {}): Headers {
  const h = new Headers(extra);
  h.set('Accept-Encoding', 'identity');
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

/** A response and the means to cut it (its body included). */
interface Exchange {
  res: Response;
  /** Aborts the request: the body's reader fails at once. */
  cut(): void;
}

/** Rejects with `error()` (then calls `onLate`) when `promise` has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number, onLate: () => void, error: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Rejected before the cut, so the race reports the deadline rather than the abort it causes.
      reject(error());
      onLate();
    }, ms);
  });
  promise.catch(() => {}); // settled after the deadline: nobody waits for it any more
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A failure a resume may cure (a cut, a stall, a late answer), as opposed to a refusal. */
class TransferCut extends Error {}

/**
 * fetch within the policy's headers timeout, with a network failure (offline, DNS, refused) named by its host; an
 * origin outside `sources` refused. `doing` says what the request is for ("downloading config.json").
 */
async function send(client: HubClient, url: URL, init: RequestInit, doing: string): Promise<Exchange> {
  if (client.sources && !hubSourcesAllow(client.sources, url))
    throw new HubError(
      `${url.origin} is not a hub origin this page may connect to (it allows ${client.sources.join(', ')}); a mirror's origin is added at build with RL_LAB_EXTRA_HUB_ORIGINS`,
    );
  if (client.signal?.aborted) throw new HubError(`stopped before ${doing}`);
  const abort = new AbortController();
  const onStop = () => abort.abort();
  client.signal?.addEventListener('abort', onStop, { once: true });
  const cut = () => {
    client.signal?.removeEventListener('abort', onStop);
    abort.abort();
  };
  const { headersTimeoutMs } = transferPolicy(client);
  try {
    const res = await within(
      client.fetch(url, { ...init, redirect: 'manual', signal: abort.signal }),
      headersTimeoutMs,
      cut,
      () => new TransferCut(`no answer from ${url.host} for ${seconds(headersTimeoutMs)} while ${doing}`),
    );
    return { res, cut };
  } catch (e) {
    cut();
    if (e instanceof TransferCut) throw e;
    if (client.signal?.aborted) throw new HubError(`stopped while ${doing}`);
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
    let res: Response;
    try {
      const exchange = await send(
        client,
        url,
        { method: 'HEAD', headers: requestHeaders(client, url) },
        `asking for ${file} of ${repo.id} (HEAD)`,
      );
      res = exchange.res;
      exchange.cut();
    } catch (e) {
      // A HEAD is not resumed: a hub that does not answer it is named at once.
      throw e instanceof TransferCut ? new HubError(e.message) : e;
    }
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

/** The SHA-256 of no bytes: the only hash a file announced as 0 bytes may have. */
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** Waits `ms`, or less when `signal` aborts. */
const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((ok) => {
    if (signal?.aborted) return ok();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      ok();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Downloads `file` (its HEAD already read as `meta`) into `partial`, resuming after the bytes it holds, and commits
 * it once its size and (when known) SHA-256 match. A transfer cut mid-file (a dropped connection, no data for the
 * idle timeout, no answer for the headers timeout, a body that ended early) is resumed with Range up to the
 * policy's `resumes` times, after a back-off `onRetry` is told about; when they run out the partial file is kept for
 * the next run. A body that would pass the announced size (or, unannounced, maxUnannouncedBytes), one with a
 * Content-Encoding, or a hash that differs, discard the partial file and throw naming the file.
 */
export async function downloadFile(
  client: HubClient,
  repo: HubRepo,
  file: string,
  revision: string,
  meta: FileMeta,
  partial: PartialFile,
  progress?: Progress,
  onNotice?: (notice: TransferNotice) => void,
): Promise<void> {
  const policy = transferPolicy(client);
  const tries = policy.resumes + 1;
  const expected = meta.size;
  const cap = expected ?? policy.maxUnannouncedBytes;
  const refuse = async (why: string): Promise<never> => {
    await partial.discard();
    throw new HubError(`${where(repo, file, revision)}: ${why}; removed the download`);
  };
  if (expected === 0 && meta.sha256 !== null && meta.sha256 !== EMPTY_SHA256)
    throw new HubError(
      `${where(repo, file, revision)}: the hub announced it as 0 bytes with SHA-256 ${meta.sha256}, which is not the hash of an empty file (${EMPTY_SHA256}); nothing was downloaded: the hub's record of this file is wrong`,
    );
  let lastError = '';
  for (let attempt = 0; attempt < tries; attempt++) {
    let have = await partial.size();
    if (attempt > 0) {
      const waitMs = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (attempt - 1));
      onNotice?.({
        kind: 'retrying',
        file,
        retry: attempt,
        retries: policy.resumes,
        waitMs,
        bytes: have,
        reason: lastError,
      });
      await pause(waitMs, client.signal);
      if (client.signal?.aborted) throw new HubError(`${where(repo, file, revision)}: stopped`);
    }
    if (have > cap) {
      await partial.discard();
      throw new HubError(
        `${where(repo, file, revision)}: the partial download holds ${have} bytes but the file has ${cap}; removed it, run again`,
      );
    }
    if (expected === null || have < expected) {
      try {
        have = await receive(client, repo, file, revision, meta, partial, have, cap, progress, onNotice, refuse);
      } catch (e) {
        if (!(e instanceof TransferCut)) throw e;
        // Cut mid-file: what arrived is kept; the next try resumes after it.
        lastError = e.message;
        continue;
      }
      if (expected !== null && have < expected) {
        lastError = `the response ended at byte ${have}`;
        continue;
      }
    }
    return verifyAndCommit(repo, file, revision, meta, partial);
  }
  const have = await partial.size();
  throw new HubError(
    `${where(repo, file, revision)}: the download stopped at ${have} of ${expected ?? '?'} bytes after ${tries} tries (${lastError}); the partial file is kept, run again to resume`,
  );
}

/**
 * One GET of `file` from byte `have` into `partial`, within the policy; returns the bytes the partial file holds
 * after it. Throws TransferCut when a resume may cure what stopped it, HubError when nothing will.
 */
async function receive(
  client: HubClient,
  repo: HubRepo,
  file: string,
  revision: string,
  meta: FileMeta,
  partial: PartialFile,
  from: number,
  cap: number,
  progress: Progress | undefined,
  onNotice: ((notice: TransferNotice) => void) | undefined,
  refuse: (why: string) => Promise<never>,
): Promise<number> {
  const policy = transferPolicy(client);
  const doing = `downloading ${file}`;
  let have = from;
  const range: Record<string, string> = have > 0 ? { Range: `bytes=${have}-` } : {};
  let url = meta.location;
  let { res, cut } = await send(client, url, { method: 'GET', headers: requestHeaders(client, url, range) }, doing);
  // Redirects are followed (a renamed repo on the endpoint, its CDN), the token only ever to the endpoint's origin.
  for (let hop = 0; res.status >= 300 && res.status < 400; hop++) {
    cut();
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
    ({ res, cut } = await send(client, url, { method: 'GET', headers: requestHeaders(client, url, range) }, doing));
  }
  // The host the bytes come from (a browser that followed a redirect itself reports it in res.url).
  const host = res.url ? new URL(res.url).host : url.host;
  try {
    if (!res.ok)
      throw statusError(res, repo, file, revision, Boolean(client.token) && url.origin === client.endpoint.origin);
    const encoding = res.headers.get('Content-Encoding');
    if (encoding !== null && encoding.trim().toLowerCase() !== 'identity')
      return await refuse(
        `${host} sent it with Content-Encoding ${encoding.slice(0, 40)}; the announced size and hash are of the file itself, so an encoded body is not accepted`,
      );
    if (have > 0 && res.status === 200) {
      // The server ignored the Range: the whole file again, from the start.
      await partial.truncate();
      have = 0;
    } else if (res.status === 206) {
      const start = /^bytes (\d+)-/.exec(res.headers.get('Content-Range') ?? '')?.[1];
      if (start === undefined || Number(start) !== have)
        throw new HubError(
          `${where(repo, file, revision)}: asked for bytes from ${have}, got ${res.headers.get('Content-Range')}`,
        );
    }
    if (!res.body) return have;
    const reader = res.body.getReader();
    // "Stalled" is said once the body has been silent for a sixth of the idle timeout (5 s of the default 30 s).
    const stallAfterMs = Math.max(1, Math.floor(policy.idleTimeoutMs / 6));
    for (;;) {
      let silent = 0;
      const stallTimer = setInterval(() => {
        silent += stallAfterMs;
        if (silent === stallAfterMs) onNotice?.({ kind: 'stalled', file, host, silentMs: silent });
      }, stallAfterMs);
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await within(
          reader.read(),
          policy.idleTimeoutMs,
          cut,
          () => new TransferCut(`no data from ${host} for ${seconds(policy.idleTimeoutMs)} while ${doing}`),
        );
      } catch (e) {
        if (e instanceof TransferCut || e instanceof HubError) throw e;
        if (client.signal?.aborted) throw new HubError(`${where(repo, file, revision)}: stopped`);
        throw new TransferCut(`the connection to ${host} dropped while ${doing} (${(e as Error).message})`);
      } finally {
        clearInterval(stallTimer);
      }
      if (chunk.done) return have;
      const value = chunk.value;
      if (have + value.length > cap) {
        cut();
        return await refuse(
          `${host} sent more than the ${cap} bytes ${meta.size === null ? 'a file of unannounced size may have' : 'the hub announced'} (the transfer was stopped at the first byte past them)`,
        );
      }
      await partial.append(value);
      have += value.length;
      progress?.(file, have, meta.size);
    }
  } finally {
    cut();
  }
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
    const got = have === 0 ? EMPTY_SHA256 : await partial.sha256();
    if (got !== meta.sha256) {
      await partial.discard();
      throw new HubError(
        `${where(repo, file, revision)}: SHA-256 ${got} differs from the hub's ${meta.sha256}; removed the download`,
      );
    }
  }
  await partial.commit();
}
