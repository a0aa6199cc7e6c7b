// Messages that must not break the page: a shared link whose config is invalid, storage full, a step not saved,
// a GPU error or device loss, a failed request. Each can be dismissed; none blocks the lab.
import { useLab } from '../store';

export function Notices() {
  const notices = useLab((s) => s.notices);
  const urlError = useLab((s) => s.urlError);
  const dismiss = useLab((s) => s.dismissNotice);
  if (!notices.length && !urlError) return null;
  return (
    <div className="notices" aria-live="polite">
      {urlError && (
        <p className="notice error" role="alert" data-testid="url-error">
          {urlError}
        </p>
      )}
      {notices.map((n) => (
        <p key={n.id} className={`notice ${n.level}`} role="alert" data-testid="notice" data-level={n.level}>
          <span>{n.message}</span>
          <button type="button" className="link" onClick={() => dismiss(n.id)} aria-label="dismiss">
            ✕
          </button>
        </p>
      ))}
    </div>
  );
}
