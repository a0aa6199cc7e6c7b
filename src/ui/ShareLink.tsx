// The shareable link of the config being edited (preset + the fields that differ from it, seed included), kept
// in the address bar too (with the open lesson's ?lesson=<id>), so copying the page's URL shares the experiment.
// Copy says whether it copied, and if not, why, with the link selected for a manual copy.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useLab } from '../store';
import { copyFailureReason } from '../store/clipboard';
import { configToUrlParams } from '../store/schema';

type CopyState = { ok: true } | { ok: false; reason: string } | null;

export function ShareLink() {
  const config = useLab((s) => s.check.config);
  const preset = useLab((s) => s.preset);
  const lessonId = useLab((s) => s.lesson?.lessonId ?? null);
  const query = useMemo(() => (config ? configToUrlParams(config, preset).toString() : null), [config, preset]);
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<CopyState>(null);
  useEffect(() => {
    if (query === null) return;
    const address = [lessonId !== null && `lesson=${encodeURIComponent(lessonId)}`, query].filter(Boolean).join('&');
    const url = `${location.pathname}${address ? `?${address}` : ''}${location.hash}`;
    if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', url);
  }, [query, lessonId]);
  // A new link has not been copied yet.
  useEffect(() => setCopied(null), [query]);
  if (query === null) return <p className="hint">Fix the marked fields to get a shareable link.</p>;
  const link = `${location.origin}${location.pathname}${query ? `?${query}` : ''}`;
  const copy = async () => {
    const failed = (error?: unknown) => {
      setCopied({
        ok: false,
        reason: copyFailureReason({
          secureContext: window.isSecureContext,
          hasClipboard: !!navigator.clipboard,
          error,
        }),
      });
      input.current?.focus();
      input.current?.select();
    };
    if (!navigator.clipboard) return failed();
    try {
      await navigator.clipboard.writeText(link);
      setCopied({ ok: true });
    } catch (e) {
      failed(e);
    }
  };
  return (
    <div className="share">
      <label htmlFor="share-link">Shareable link (config and seed)</label>
      <div className="share-row">
        <input
          id="share-link"
          ref={input}
          data-testid="share-link"
          readOnly
          value={link}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" className="secondary" data-testid="share-copy" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      {copied && (
        <p
          className={`copy-status${copied.ok ? '' : ' error'}`}
          role="status"
          data-testid="copy-status"
          data-ok={copied.ok}
        >
          {copied.ok
            ? 'Copied.'
            : `Could not copy: ${copied.reason}. The link is selected: press Ctrl+C (⌘C) to copy it.`}
        </p>
      )}
    </div>
  );
}
