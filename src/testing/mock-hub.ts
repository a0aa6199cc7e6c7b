// A mock of a Hugging Face-style hub for tests: two real HTTP servers on 127.0.0.1 at ephemeral ports. The hub
// answers `/<org>/<name>/resolve/<rev>/<file>` (GET and HEAD) with X-Repo-Commit; a large file (its name ends in
// .safetensors or .onnx) gets a 302 to the second server (the CDN), with X-Linked-Size and X-Linked-Etag (its
// SHA-256), as the hub does; a small one is answered directly with its ETag. Both honour `Range: bytes=N-` (206).
// A renamed repo answers a 307 with a relative Location. Faults on request: slow (chunks with a pause), a connection
// dropped after N bytes, a gated repo (401 without the token, 403 with a wrong one), a wrong size or hash, and the
// hostile ones a transfer policy must survive: a stall after the headers and some bytes (the connection left open,
// silent), a HEAD never answered, a body that never ends, a gzip-encoded body (a "bomb": a few KB that inflate to
// many MB). Every request is logged (method, path, range, whether it
// carried Authorization) so tests can count them. Both answer with the CORS headers a page on another origin needs
// (and a preflight), and the CDN names each file by its SHA-256 ETag, which is what a browser that follows the
// hub's redirect sees.

import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockRepo {
  files: Record<string, Uint8Array | string>;
  /** The commit every revision resolves to (40 hex digits). */
  commit?: string;
  /** Only this token may read it: 401 without one, 403 with another. */
  token?: string;
}

export interface MockRequest {
  server: 'hub' | 'cdn';
  method: string;
  path: string;
  range: string | null;
  authorization: string | null;
}

export interface MockFaults {
  /** Drop the connection after this many bytes of the body, for the next `count` GETs of `file`. */
  drop?: { file: string; afterBytes: number; count: number };
  /** Send bodies in chunks of this many bytes with a pause between them. */
  slow?: { chunkBytes: number; pauseMs: number };
  /** Answer a Range request with the whole file (200), as a server without range support does. */
  ignoreRange?: boolean;
  /** The CDN answers every request with a 302 to this URL. */
  cdnRedirectTo?: string;
  /** Announce this size (X-Linked-Size / Content-Length of the HEAD) for `file` instead of its own. */
  wrongSize?: { file: string; size: number };
  /** Announce this SHA-256 for `file`. */
  wrongSha256?: { file: string; sha256: string };
  /** Every GET of `file`: the headers and the first `afterBytes` bytes, then silence with the connection open. */
  stall?: { file: string; afterBytes: number };
  /** A HEAD of `file` on the hub is never answered (nor closed). */
  silentHead?: { file: string };
  /** Every GET of `file`: the file, then zeros forever (no Content-Length), until the client hangs up. */
  endless?: { file: string };
  /** Every GET of `file`: `inflatedBytes` zeros, gzip-compressed, with Content-Encoding: gzip. */
  gzip?: { file: string; inflatedBytes: number };
}

export interface MockHub {
  /** The hub's endpoint, http://127.0.0.1:<port> */
  endpoint: string;
  cdnOrigin: string;
  requests: MockRequest[];
  faults: MockFaults;
  repos: Map<string, MockRepo>;
  /** Renamed repos (old "org/name" -> new): a 307 with a relative Location on the hub's own origin, as the hub sends. */
  renamed: Map<string, string>;
  close(): Promise<void>;
}

const isLarge = (file: string) => /\.(safetensors|onnx)$/.test(file);
const bytesOf = (v: Uint8Array | string) => (typeof v === 'string' ? new TextEncoder().encode(v) : v);
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const sha1 = (b: Uint8Array) => createHash('sha1').update(b).digest('hex');

/**
 * The headers a page on another origin needs to read the hub's answers (as the hub sends them): any origin, the
 * hub's own headers exposed, and a preflight for the token (Authorization) and Range.
 */
const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'X-Repo-Commit, X-Linked-Size, X-Linked-Etag, ETag, Content-Range, Content-Length, Accept-Ranges, X-Error-Code',
};

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, port = 0): Promise<Server> {
  const server = createServer((req, res) => {
    for (const [k, v] of Object.entries(CORS)) res.setHeader(k, v);
    if (req.method === 'OPTIONS') {
      res
        .writeHead(204, {
          'Access-Control-Allow-Methods': 'GET, HEAD',
          'Access-Control-Allow-Headers': 'Authorization, Range',
          'Access-Control-Max-Age': '600',
        })
        .end();
      return;
    }
    handler(req, res);
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => ok(server));
  });
}

/**
 * Starts the hub and its CDN serving `repos` ("org/name" -> files), at ephemeral ports unless `ports` names them
 * (a browser test's page must be built to allow them).
 */
export async function startMockHub(
  repos: Record<string, MockRepo>,
  ports: { hub?: number; cdn?: number } = {},
): Promise<MockHub> {
  const hub: MockHub = {
    endpoint: '',
    cdnOrigin: '',
    requests: [],
    faults: {},
    repos: new Map(Object.entries(repos)),
    renamed: new Map(),
    close: async () => {},
  };
  const log = (server: 'hub' | 'cdn', req: IncomingMessage) =>
    hub.requests.push({
      server,
      method: req.method ?? '',
      path: req.url ?? '',
      range: req.headers.range ?? null,
      authorization: req.headers.authorization ?? null,
    });

  /** Sends `body` whole or from a Range, slowly or cut short as the faults say. */
  const sendBody = (
    req: IncomingMessage,
    res: ServerResponse,
    file: string,
    body: Uint8Array,
    head: Record<string, string>,
  ) => {
    const faults = hub.faults;
    if (req.method === 'GET' && faults.gzip?.file === file) {
      const packed = gzipSync(new Uint8Array(faults.gzip.inflatedBytes));
      res.writeHead(200, { ...head, 'Content-Encoding': 'gzip', 'Content-Length': String(packed.length) }).end(packed);
      return;
    }
    if (req.method === 'GET' && faults.endless?.file === file) {
      res.writeHead(200, { ...head });
      const zeros = new Uint8Array(64 * 1024);
      const more = () => {
        if (res.destroyed || res.writableEnded) return;
        if (res.write(zeros)) setImmediate(more);
        else res.once('drain', more);
      };
      res.write(body, more);
      return;
    }
    const m = faults.ignoreRange ? null : /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    let start = 0;
    if (m) {
      start = Number(m[1]);
      if (start >= body.length) {
        res.writeHead(416, { 'Content-Range': `bytes */${body.length}` }).end();
        return;
      }
      res.writeHead(206, {
        ...head,
        'Content-Length': String(body.length - start),
        'Content-Range': `bytes ${start}-${body.length - 1}/${body.length}`,
      });
    } else res.writeHead(200, { ...head, 'Content-Length': String(body.length), 'Accept-Ranges': 'bytes' });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    let rest = body.subarray(start);
    if (faults.stall?.file === file) {
      // The headers and a few bytes, then nothing: the connection stays open until the client cuts it.
      res.write(rest.subarray(0, faults.stall.afterBytes));
      return;
    }
    const drop = hub.faults.drop;
    if (drop && drop.file === file && drop.count > 0) {
      drop.count--;
      res.write(rest.subarray(0, drop.afterBytes), () => res.destroy());
      return;
    }
    const slow = hub.faults.slow;
    if (!slow) {
      res.end(rest);
      return;
    }
    const next = () => {
      if (rest.length === 0) return res.end();
      const chunk = rest.subarray(0, slow.chunkBytes);
      rest = rest.subarray(chunk.length);
      res.write(chunk, () => setTimeout(next, slow.pauseMs));
    };
    next();
  };

  const cdn = await listen((req, res) => {
    log('cdn', req);
    if (hub.faults.cdnRedirectTo) return void res.writeHead(302, { Location: hub.faults.cdnRedirectTo }).end();
    // /<org>/<name>/<commit>/<file...>
    const parts = (req.url ?? '').split('/').slice(1).map(decodeURIComponent);
    const repo = hub.repos.get(`${parts[0]}/${parts[1]}`);
    const file = parts.slice(3).join('/');
    const data = repo?.files[file];
    if (!repo || data === undefined) return void res.writeHead(404).end();
    // The CDN names a file by its SHA-256 (ETag), which a browser, following the hub's redirect, reads here.
    sendBody(req, res, file, bytesOf(data), { ETag: `"${sha256(bytesOf(data))}"` });
  }, ports.cdn);

  const server = await listen((req, res) => {
    log('hub', req);
    const m = /^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(req.url ?? '');
    if (!m) return void res.writeHead(404, { 'X-Error-Code': 'RepoNotFound' }).end();
    const [org, name, revision, file] = [m[1], m[2], m[3], m[4]].map(decodeURIComponent);
    const moved = hub.renamed.get(`${org}/${name}`);
    if (moved !== undefined)
      return void res.writeHead(307, { Location: `/${moved}/resolve/${m[3]}/${m[4]}`, 'Content-Length': '0' }).end();
    const repo = hub.repos.get(`${org}/${name}`);
    if (!repo) return void res.writeHead(404, { 'X-Error-Code': 'RepoNotFound' }).end();
    if (repo.token !== undefined) {
      const auth = req.headers.authorization;
      if (auth === undefined) return void res.writeHead(401, { 'X-Error-Code': 'GatedRepo' }).end();
      if (auth !== `Bearer ${repo.token}`) return void res.writeHead(403, { 'X-Error-Code': 'GatedRepo' }).end();
    }
    const commit = repo.commit ?? 'c'.repeat(40);
    if (revision !== 'main' && revision !== commit)
      return void res.writeHead(404, { 'X-Error-Code': 'RevisionNotFound' }).end();
    const data = repo.files[file];
    if (data === undefined)
      return void res.writeHead(404, { 'X-Error-Code': 'EntryNotFound', 'X-Repo-Commit': commit }).end();
    if (req.method === 'HEAD' && hub.faults.silentHead?.file === file) return; // never answered
    const body = bytesOf(data);
    const size = hub.faults.wrongSize?.file === file ? hub.faults.wrongSize.size : body.length;
    const hash = hub.faults.wrongSha256?.file === file ? hub.faults.wrongSha256.sha256 : sha256(body);
    if (isLarge(file)) {
      const location = `${hub.cdnOrigin}/${[org, name, commit, ...file.split('/')].map(encodeURIComponent).join('/')}`;
      res
        .writeHead(302, {
          Location: location,
          'X-Repo-Commit': commit,
          'X-Linked-Size': String(size),
          'X-Linked-Etag': `"${hash}"`,
          'Content-Length': '0',
        })
        .end();
      return;
    }
    if (req.method === 'HEAD')
      return void res
        .writeHead(200, { 'X-Repo-Commit': commit, ETag: `"${sha1(body)}"`, 'Content-Length': String(size) })
        .end();
    sendBody(req, res, file, body, { 'X-Repo-Commit': commit, ETag: `"${sha1(body)}"` });
  }, ports.hub);

  const origin = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  hub.endpoint = origin(server);
  hub.cdnOrigin = origin(cdn);
  hub.close = async () => {
    for (const s of [server, cdn]) {
      s.closeAllConnections();
      await new Promise((ok) => s.close(ok));
    }
  };
  return hub;
}
