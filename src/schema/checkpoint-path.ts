// Where a `checkpoint` (or `reward_model`) value points: the folder it names, and whether that folder is on another
// site. Pure string and URL work, shared by the start-policy loader (start-policy.ts) and the page, which warns
// before a run fetches from a foreign origin; no loading, no model code.

import { looksLikeHubId } from './hub-id';

/** The directory of a `checkpoint` value: a shipped name maps to checkpoints/<name>/; a URL or path is used as given. */
export function checkpointDir(checkpoint: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(checkpoint)) return `checkpoints/${checkpoint}/`;
  return checkpoint.endsWith('/') ? checkpoint : `${checkpoint}/`;
}

/**
 * The origin a `checkpoint` value would be fetched from when it is not the site's own (`site`: the page's base
 * URL), or null when it is: a shipped name, a relative path, or a URL on the site's origin. Anything the URL
 * parser makes no origin of (data:, a bad URL) counts as foreign, shown as the value's scheme or the value cut.
 */
export function foreignCheckpointOrigin(checkpoint: string, site: string): string | null {
  const dir = checkpointDir(checkpoint);
  let url: URL;
  try {
    url = new URL(dir, site);
  } catch {
    return dir.length > 80 ? `${dir.slice(0, 80)}...` : dir;
  }
  if (url.origin === new URL(site).origin) return null;
  return url.origin === 'null' ? `${url.protocol} URL` : url.origin;
}

/**
 * The top folders of the site a `checkpoint` (or `reward_model`) path may name: shipped checkpoints and models,
 * imported folders (local/<name>/), test fixtures. Any other value of the shape org/name[@revision] is a hub id,
 * read from the hub models the browser keeps and never fetched as a path of the site.
 */
export const SITE_MODEL_FOLDERS: readonly string[] = ['checkpoints', 'models', 'local', 'fixtures', 'tokenizers'];

/** The value itself when it names a hub model (`org/name[@revision]`, not a site folder), else null. */
export function hubModelOf(value: string | null): string | null {
  if (value === null || !looksLikeHubId(value)) return null;
  return SITE_MODEL_FOLDERS.includes(value.split('/')[0]) ? null : value;
}
