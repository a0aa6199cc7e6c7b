// Saves the files of an export the worker prepared (metrics, rollouts, checkpoint) as browser downloads, and
// lists what was saved last. The store holds the files; this is the only place that touches Blob URLs.
import { useEffect, useState } from 'react';
import { useLab } from '../store';

/** Saves one file as a browser download (also the "Run elsewhere" panel's). */
export function save(name: string, mime: string, data: string | Uint8Array): void {
  const blob = new Blob([typeof data === 'string' ? data : (data as Uint8Array<ArrayBuffer>)], { type: mime });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function Downloads() {
  const downloads = useLab((s) => s.downloads);
  const clear = useLab((s) => s.clearDownloads);
  const [last, setLast] = useState<{ name: string; bytes: number }[]>([]);
  useEffect(() => {
    if (!downloads) return;
    for (const f of downloads.files) save(f.name, f.mime, f.data);
    setLast(
      downloads.files.map((f) => ({
        name: f.name,
        bytes: typeof f.data === 'string' ? new Blob([f.data]).size : f.data.byteLength,
      })),
    );
    clear();
  }, [downloads, clear]);
  if (!last.length) return null;
  return (
    <p className="hint small" data-testid="last-export" data-files={last.map((f) => f.name).join(',')}>
      Saved {last.map((f) => `${f.name} (${f.bytes.toLocaleString('en-US')} bytes)`).join(', ')}
    </p>
  );
}
