// Messages that must not break the page: a shared link whose config is partly invalid, a link's checkpoint on
// another site (used only once the person confirms its origin, and only on a hub origin the page may connect to:
// else the notice lists those), storage full, a step not saved, a GPU error or
// device loss, a failed request. Each can be dismissed; none blocks the lab.
import { useLab } from '../store';

/** The ✕ that dismisses a notice. */
function DismissButton({ onClick, testId }: { onClick: () => void; testId?: string }) {
  return (
    <button type="button" className="link" onClick={onClick} aria-label="dismiss" data-testid={testId}>
      ✕
    </button>
  );
}

export function Notices() {
  const notices = useLab((s) => s.notices);
  const urlError = useLab((s) => s.urlError);
  const linkCheckpoint = useLab((s) => s.linkCheckpoint);
  const hubOrigins = useLab((s) => s.hubOrigins);
  const dismiss = useLab((s) => s.dismissNotice);
  const dismissUrlError = useLab((s) => s.dismissUrlError);
  const confirmLinkCheckpoint = useLab((s) => s.confirmLinkCheckpoint);
  const refuseLinkCheckpoint = useLab((s) => s.refuseLinkCheckpoint);
  if (!notices.length && !urlError && !linkCheckpoint) return null;
  return (
    <div className="notices" aria-live="polite">
      {linkCheckpoint && (
        <div className="notice warning" role="alert" data-testid="link-checkpoint" data-origin={linkCheckpoint.origin}>
          {linkCheckpoint.reachable ? (
            <span>
              This link starts from a checkpoint on another site, <strong>{linkCheckpoint.origin}</strong>. Nothing has
              been read from it; the page starts from its own model until you choose to use it.
            </span>
          ) : (
            <span>
              This link starts from a checkpoint on another site, <strong>{linkCheckpoint.origin}</strong>, which this
              page cannot connect to: it reaches only itself and the hubs it was built for (
              <span data-testid="hub-origins">{hubOrigins.join(', ')}</span>). Nothing has been read from it; the page
              starts from its own model.
            </span>
          )}
          <span className="notice-actions">
            {linkCheckpoint.reachable && (
              <button type="button" onClick={confirmLinkCheckpoint} data-testid="link-checkpoint-use">
                Use the checkpoint from {linkCheckpoint.origin}
              </button>
            )}
            <DismissButton onClick={refuseLinkCheckpoint} testId="link-checkpoint-refuse" />
          </span>
        </div>
      )}
      {urlError && (
        <p className="notice error" role="alert" data-testid="url-error">
          <span>{urlError}</span>
          <DismissButton onClick={dismissUrlError} testId="url-error-dismiss" />
        </p>
      )}
      {notices.map((n) => (
        <p key={n.id} className={`notice ${n.level}`} role="alert" data-testid="notice" data-level={n.level}>
          <span>{n.message}</span>
          <DismissButton onClick={() => dismiss(n.id)} />
        </p>
      ))}
    </div>
  );
}
