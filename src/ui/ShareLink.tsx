// The shareable link of the config being edited (preset + the fields that differ from it, seed included), kept
// in the address bar too (while a lesson is open, the address is its ?lesson=<id> alone), so copying the page's
// URL shares the experiment or the lesson.
// Values too long for an address (a prompt list, a reward_fn) are kept in this browser and referenced
// (link-state.ts): the address stays under 2,000 characters, and the box says what another machine will lack.
// Copy says whether it copied, and if not, why, with the link selected for a manual copy.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useLab } from '../store';
import { copyFailureReason } from '../store/clipboard';
import { inlineAddress, pageLinkStateStore, shortenAddress } from '../store/link-state';
import { configToUrlParams } from '../store/schema';

type CopyState = { ok: true } | { ok: false; reason: string } | null;

/** This page's store of long link values (one per page). */
const linkStateStore = pageLinkStateStore();

export function ShareLink() {
  const config = useLab((s) => s.check.config);
  const preset = useLab((s) => s.preset);
  const lessonId = useLab((s) => s.lesson?.lessonId ?? null);
  const addNotice = useLab((s) => s.addNotice);
  const params = useMemo(() => (config ? configToUrlParams(config, preset) : null), [config, preset]);
  // The address as written: long values kept in this browser and referenced (link-state.ts), under 2,000 characters.
  // A config with no long value has its address at once; one with long values once they are stored.
  const inline = useMemo(() => (params ? inlineAddress(params) : null), [params]);
  const [stored, setStored] = useState<{ params: URLSearchParams; address: string; stored: string[] } | null>(null);
  const short =
    inline !== null ? { address: inline, stored: [] as string[] } : stored?.params === params ? stored : null;
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<CopyState>(null);
  useEffect(() => {
    if (params === null || inline !== null) return;
    let current = true;
    shortenAddress(params, linkStateStore).then(
      (s) => current && setStored({ params, ...s }),
      (e: unknown) =>
        addNotice(
          'warning',
          `Could not keep the config's long values for the address: ${e instanceof Error ? e.message : String(e)}`,
        ),
    );
    return () => {
      current = false;
    };
  }, [params, inline, addNotice]);
  const query = short?.address ?? null;
  useEffect(() => {
    // An open lesson's address is the lesson alone: its runs' configs are the lesson's, not the edited one.
    const address = lessonId !== null ? `lesson=${encodeURIComponent(lessonId)}` : query;
    if (address === null) return;
    const url = `${location.pathname}${address ? `?${address}` : ''}${location.hash}`;
    if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', url);
  }, [query, lessonId]);
  // A new link has not been copied yet.
  useEffect(() => setCopied(null), [query]);
  if (params === null) return <p className="hint">Fix the marked fields to get a shareable link.</p>;
  if (short === null) return <p className="hint">Making the shareable link...</p>;
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
      {short.stored.length > 0 && (
        <p className="hint small" data-testid="share-stored" data-fields={short.stored.join(',')}>
          Too long for a link: {short.stored.join(', ')} {short.stored.length === 1 ? 'is' : 'are'} kept in this browser
          and the link refers to {short.stored.length === 1 ? 'it' : 'them'}. It opens here with{' '}
          {short.stored.length === 1 ? 'that value' : 'those values'}; on another machine{' '}
          {short.stored.length === 1 ? 'it is' : 'they are'} missing (the page says so). To share{' '}
          {short.stored.length === 1 ? 'it' : 'them'}, export the config as a file from Run elsewhere and send that.
        </p>
      )}
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
