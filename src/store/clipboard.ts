// Why a copy to the clipboard failed, in words a reader can act on: the page is not a secure context (the
// Clipboard API exists only over https or on localhost), the browser has no clipboard API, or the permission was
// refused. Pure; the copying itself is the page's.

/** What a failed copy knows: whether the page is a secure context, whether `navigator.clipboard` exists, what it threw. */
export interface CopyFailure {
  secureContext: boolean;
  hasClipboard: boolean;
  error?: unknown;
}

/** The reason a clipboard write failed (`navigator.clipboard.writeText` rejected, or there is no clipboard API). */
export function copyFailureReason(f: CopyFailure): string {
  if (!f.secureContext) return 'the browser allows the clipboard only on https pages or localhost';
  if (!f.hasClipboard) return 'this browser has no clipboard API';
  const e = f.error;
  const name = typeof e === 'object' && e !== null && 'name' in e ? String((e as { name: unknown }).name) : '';
  if (name === 'NotAllowedError' || name === 'SecurityError')
    return 'clipboard permission denied (the browser or a site setting blocks it)';
  const message =
    typeof e === 'object' && e !== null && 'message' in e
      ? String((e as { message: unknown }).message)
      : e === undefined
        ? ''
        : String(e);
  return `the browser refused (${message || name || 'no reason given'})`;
}
