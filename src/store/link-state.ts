// Long page state out of the address. A config's field whose link text is long (a prompt list, a reward_fn, a
// chat template) is kept in this browser's IndexedDB under the SHA-256 of its text, and the address carries
// `ref.<field>=<hash>` instead, so the address stays under MAX_ADDRESS_CHARS (a 22,251-character address got HTTP
// 431 on reload). Reading a link puts the kept texts back as ordinary parameters, so the config is read and checked
// exactly as a link's own text (never run: a reward_fn goes to the sandbox like a typed one); a reference this
// browser does not hold (a link made on another machine) is named, and the rest of the link still opens.

import { quote } from '../schema/fields';

/** Longest address (query string) the page writes; long values move to the store until it fits. */
export const MAX_ADDRESS_CHARS = 2000;
/** Longest field text (URL-encoded) kept in the address itself; longer ones are always stored. */
export const MAX_INLINE_VALUE = 200;
/** How a stored field is named in the address: `ref.prompts=<hash>`. */
export const REF_PREFIX = 'ref.';
/** A reference: the first 128 bits of the text's SHA-256, in hex. */
const REFERENCE = /^[0-9a-f]{32}$/;

/** Where a browser keeps the texts its links refer to, by reference. */
export interface LinkStateStore {
  get(ref: string): Promise<string | undefined>;
  put(ref: string, text: string): Promise<void>;
}

/** A store in memory (tests; a browser without IndexedDB, where references then live as long as the page). */
export class MemoryLinkStateStore implements LinkStateStore {
  private readonly texts = new Map<string, string>();
  get size(): number {
    return this.texts.size;
  }
  async get(ref: string): Promise<string | undefined> {
    return this.texts.get(ref);
  }
  async put(ref: string, text: string): Promise<void> {
    this.texts.set(ref, text);
  }
}

const DB_NAME = 'rl-lab-link-state';
const DB_STORE = 'texts';

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error ?? new Error('IndexedDB request failed'));
  });
}

/** The texts in this browser's IndexedDB (a database of its own, beside the worker's run store). */
export class IdbLinkStateStore implements LinkStateStore {
  private db: Promise<IDBDatabase> | null = null;
  private open(): Promise<IDBDatabase> {
    this.db ??= new Promise((resolve, reject) => {
      const r = indexedDB.open(DB_NAME, 1);
      r.onupgradeneeded = () => r.result.createObjectStore(DB_STORE);
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error ?? new Error(`could not open ${DB_NAME}`));
    });
    return this.db;
  }
  async get(ref: string): Promise<string | undefined> {
    const db = await this.open();
    const v: unknown = await request(db.transaction(DB_STORE).objectStore(DB_STORE).get(ref));
    return typeof v === 'string' ? v : undefined;
  }
  async put(ref: string, text: string): Promise<void> {
    const db = await this.open();
    await request(db.transaction(DB_STORE, 'readwrite').objectStore(DB_STORE).put(text, ref));
  }
}

/** The store this page uses: IndexedDB where there is one. */
export function pageLinkStateStore(): LinkStateStore {
  return typeof indexedDB === 'undefined' ? new MemoryLinkStateStore() : new IdbLinkStateStore();
}

/** A text's reference: the first 128 bits of its SHA-256 (UTF-8), in hex. */
export async function referenceOf(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest).subarray(0, 16)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** A parameter's length in the address (`key=value&`, encoded). */
function paramLength(key: string, value: string): number {
  return new URLSearchParams({ [key]: value }).toString().length + 1;
}

/** The address of parameters that all fit in it as they are (nothing to store), else null. */
export function inlineAddress(params: URLSearchParams): string | null {
  const address = params.toString();
  if (address.length > MAX_ADDRESS_CHARS) return null;
  for (const [k, v] of params) if (paramLength(k, v) > MAX_INLINE_VALUE) return null;
  return address;
}

/**
 * A config's link parameters as the address carries them: each value longer than MAX_INLINE_VALUE stored and
 * referenced, then the longest of the rest until the address fits MAX_ADDRESS_CHARS. `stored`: the fields moved.
 */
export async function shortenAddress(
  params: URLSearchParams,
  store: LinkStateStore,
): Promise<{ address: string; stored: string[] }> {
  const entries = [...params];
  const sizes = entries.map(([k, v]) => paramLength(k, v));
  let total = sizes.reduce((a, b) => a + b, 0);
  const move = new Set<number>();
  entries.forEach(([k, v], i) => {
    if (paramLength(k, v) > MAX_INLINE_VALUE) move.add(i);
  });
  const refLength = (k: string) => paramLength(`${REF_PREFIX}${k}`, '0'.repeat(32));
  for (const i of move) total += refLength(entries[i][0]) - sizes[i];
  const byLength = entries.map((_, i) => i).sort((a, b) => sizes[b] - sizes[a]);
  for (const i of byLength) {
    if (total <= MAX_ADDRESS_CHARS) break;
    if (move.has(i) || sizes[i] <= refLength(entries[i][0])) continue;
    move.add(i);
    total += refLength(entries[i][0]) - sizes[i];
  }
  if (!move.size) return { address: params.toString(), stored: [] };
  const out = new URLSearchParams();
  for (const [i, [k, v]] of entries.entries()) {
    if (!move.has(i)) {
      out.append(k, v);
      continue;
    }
    const ref = await referenceOf(v);
    await store.put(ref, v);
    out.append(`${REF_PREFIX}${k}`, ref);
  }
  return { address: out.toString(), stored: [...move].map((i) => entries[i][0]) };
}

/**
 * A link's query with its references replaced by the stored texts. `missing`: the fields whose text this browser
 * does not hold (left out, so they stay at the preset's values); `problems`: references that are not references.
 */
export async function expandLinkState(
  search: string,
  store: LinkStateStore,
): Promise<{ search: string; missing: string[]; problems: string[] }> {
  const params = new URLSearchParams(search);
  const out = new URLSearchParams();
  const missing: string[] = [];
  const problems: string[] = [];
  for (const [k, v] of params) {
    if (!k.startsWith(REF_PREFIX)) {
      out.append(k, v);
      continue;
    }
    const field = k.slice(REF_PREFIX.length);
    if (!field) {
      problems.push(`${k}: names no field`);
      continue;
    }
    if (!REFERENCE.test(v)) {
      problems.push(`${k}: not a stored value's reference (32 hex digits), got ${quote(v)}`);
      continue;
    }
    const text = await store.get(v).catch(() => undefined);
    if (text === undefined) missing.push(field);
    else out.append(field, text);
  }
  return { search: out.toString(), missing, problems };
}

/** What a person reads when a link's stored values are not in this browser. */
export function missingStateText(missing: readonly string[]): string {
  return (
    `This link refers to ${missing.join(', ')} kept in the browser that made it; this browser does not have ` +
    `${missing.length === 1 ? 'it' : 'them'}, so ${missing.length === 1 ? 'that field stays' : 'those fields stay'} ` +
    "at the preset's values and the rest of the link is used. To share long values, export the config as a file " +
    '(Run elsewhere) and send that.'
  );
}
