// The shareable link of the config being edited (preset + the fields that differ from it, seed included), kept
// in the address bar too (with the open lesson's ?lesson=<id>), so copying the page's URL shares the experiment.
import { useEffect, useMemo } from 'react';
import { useLab } from '../store';
import { configToUrlParams } from '../store/schema';

export function ShareLink() {
  const config = useLab((s) => s.check.config);
  const preset = useLab((s) => s.preset);
  const lessonId = useLab((s) => s.lesson?.lessonId ?? null);
  const query = useMemo(() => (config ? configToUrlParams(config, preset).toString() : null), [config, preset]);
  useEffect(() => {
    if (query === null) return;
    const address = [lessonId !== null && `lesson=${encodeURIComponent(lessonId)}`, query].filter(Boolean).join('&');
    const url = `${location.pathname}${address ? `?${address}` : ''}${location.hash}`;
    if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', url);
  }, [query, lessonId]);
  if (query === null) return <p className="hint">Fix the marked fields to get a shareable link.</p>;
  const link = `${location.origin}${location.pathname}${query ? `?${query}` : ''}`;
  return (
    <div className="share">
      <label htmlFor="share-link">Shareable link (config and seed)</label>
      <div className="share-row">
        <input id="share-link" data-testid="share-link" readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(link)}>
          Copy
        </button>
      </div>
    </div>
  );
}
