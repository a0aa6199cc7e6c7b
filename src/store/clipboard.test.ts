// The share link's Copy says why a copy failed: an insecure page, no clipboard API, a refused permission, or
// whatever else the browser said.
import { describe, expect, it } from 'vitest';
import { copyFailureReason } from './clipboard';

describe('copy failure reasons', () => {
  it('name the cause the reader can act on', () => {
    expect(copyFailureReason({ secureContext: false, hasClipboard: false })).toBe(
      'the browser allows the clipboard only on https pages or localhost',
    );
    expect(copyFailureReason({ secureContext: true, hasClipboard: false })).toBe('this browser has no clipboard API');
    const denied = Object.assign(new Error('Write permission denied.'), { name: 'NotAllowedError' });
    expect(copyFailureReason({ secureContext: true, hasClipboard: true, error: denied })).toBe(
      'clipboard permission denied (the browser or a site setting blocks it)',
    );
    expect(
      copyFailureReason({ secureContext: true, hasClipboard: true, error: new Error('Document is not focused.') }),
    ).toBe('the browser refused (Document is not focused.)');
    expect(copyFailureReason({ secureContext: true, hasClipboard: true })).toBe(
      'the browser refused (no reason given)',
    );
  });
});
