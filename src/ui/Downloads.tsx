// Saves the files of an export the worker prepared (metrics, rollouts, checkpoint) as browser downloads, and
// lists what was saved last. A checkpoint comes as the folders transformers and PEFT load (paths with a `/`): one
// .zip download, or, where the browser has the File System Access API and the person picked a folder, the folders
// written into it. The store holds the files; this is the only place that touches Blob URLs and directory handles.
import { useEffect, useState } from 'react';
import { zipChunks } from '../store/zip';
import { checkpointDir, hubModelOf, useLab } from '../store';

/** Saves one file as a browser download (also the "Run elsewhere" panel's). */
export function save(name: string, mime: string, data: string | Uint8Array | Blob): void {
  const blob =
    data instanceof Blob
      ? data
      : new Blob([typeof data === 'string' ? data : (data as Uint8Array<ArrayBuffer>)], { type: mime });
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

/** The part of the File System Access API the folder export uses (Chromium's showDirectoryPicker). */
interface WritableDir {
  name: string;
  getDirectoryHandle(name: string, o: { create: boolean }): Promise<WritableDir>;
  getFileHandle(
    name: string,
    o: { create: boolean },
  ): Promise<{ createWritable(): Promise<{ write(d: Blob | string): Promise<void>; close(): Promise<void> }> }>;
}
type DirPicker = (o: { mode: 'readwrite'; id?: string }) => Promise<WritableDir>;

function directoryPicker(): DirPicker | null {
  const w = window as unknown as { showDirectoryPicker?: DirPicker };
  return typeof w.showDirectoryPicker === 'function' ? w.showDirectoryPicker.bind(window) : null;
}

/** Whether this browser can write the exported folder itself (else the export is a .zip). */
export const canWriteFolders = (): boolean => directoryPicker() !== null;

/** The folder the person picked for the next checkpoint export (set by pickExportFolder, used once). */
let pendingDir: WritableDir | null = null;

/**
 * Asks for the folder to write the next checkpoint export into (must run in the click's handler: the picker needs
 * the gesture). False when the person cancelled or the browser has no picker.
 */
export async function pickExportFolder(): Promise<boolean> {
  const pick = directoryPicker();
  if (!pick) return false;
  try {
    pendingDir = await pick({ mode: 'readwrite', id: 'rl-lab-export' });
    return true;
  } catch {
    return false;
  }
}

type Saved = { name: string; bytes: number };
interface LastExport {
  files: Saved[];
  /** For a folder export: how it was saved, its folders and the Python that loads them. */
  folder?: { how: 'zip' | 'folder'; where: string; folders: string[]; python: string[] };
}

const sizeOf = (d: string | Uint8Array) => (typeof d === 'string' ? new Blob([d]).size : d.byteLength);

type ExportFile = { name: string; data: string | Uint8Array };

/** The adapter's base model as its adapter_config.json names it (the run's checkpoint), or null. */
function adapterBase(files: ExportFile[], adapter: string | undefined): string | null {
  const config = files.find((f) => f.name === `${adapter}/adapter_config.json`);
  if (!adapter || !config) return null;
  try {
    const base: unknown = JSON.parse(
      typeof config.data === 'string' ? config.data : new TextDecoder().decode(config.data),
    ).base_model_name_or_path;
    return typeof base === 'string' ? base : null;
  } catch {
    return null;
  }
}

/**
 * The folder of this site a base names (the shipped models/tiny-qwen2/, a warm start's checkpoints/<name>/), or
 * null for a hub id, a URL or a folder imported from the person's disk (local/<name>/): those Python reads as named.
 */
function siteFolderOf(base: string): string | null {
  if (hubModelOf(base) !== null || /^[a-z][a-z0-9+.-]*:/i.test(base)) return null;
  const dir = checkpointDir(base);
  return /^(models|checkpoints)\//.test(dir) ? dir : null;
}

/** A folder's name on disk: the path's last part ("models/tiny-qwen2/" -> "tiny-qwen2"). */
const lastPart = (dir: string) => dir.replace(/\/+$/, '').split('/').pop() ?? dir;

/**
 * A LoRA export whose base is a folder of this site: that folder's files, fetched from the site (or its offline
 * copy), as one more folder of the export, since Python cannot load a path of the site. The same file names as the
 * merged folder's (config, weights, tokenizer files); a file the site lacks is left out. Empty for any other base.
 */
async function siteBaseFiles(files: ExportFile[], folders: string[]): Promise<ExportFile[]> {
  const adapter = folders.find((f) => f.endsWith('-adapter'));
  const base = adapterBase(files, adapter);
  const dir = base === null ? null : siteFolderOf(base);
  if (dir === null) return [];
  const names = files
    .filter((f) => f.name.startsWith(`${folders[0]}/`))
    .map((f) => f.name.slice(folders[0].length + 1));
  const out: ExportFile[] = [];
  for (const name of names) {
    const r = await fetch(new URL(dir + name, document.baseURI)).catch(() => null);
    // A static server answers a missing file with the page itself (200, text/html): no model folder holds HTML.
    if (r?.ok && !(r.headers.get('content-type') ?? '').startsWith('text/html'))
      out.push({ name: `${lastPart(dir)}/${name}`, data: new Uint8Array(await r.arrayBuffer()) });
  }
  return out;
}

/**
 * The Python that loads the exported folders (quoted as JSON, which Python reads as its own string literal). A
 * LoRA adapter loads onto its base: a hub id as named; a folder of this site from the copy the export carries
 * beside the adapter (or, without it, from a folder of that name the comment says to fill); an imported folder
 * from where it is on the person's disk.
 */
function pythonLines(files: ExportFile[], folders: string[]): string[] {
  const lines = [
    'from transformers import AutoModelForCausalLM',
    `model = AutoModelForCausalLM.from_pretrained(${JSON.stringify(folders[0])})`,
  ];
  const adapter = folders.find((f) => f.endsWith('-adapter'));
  if (!adapter) return lines;
  const base = adapterBase(files, adapter);
  const site = base === null ? null : siteFolderOf(base);
  let path = base ?? 'path/to/base';
  lines.push('from peft import PeftModel');
  if (site !== null) {
    path = lastPart(site);
    lines.push(
      folders.includes(path)
        ? `# The base: this site's ${site} (a model the lab ships, on no hub), exported beside the adapter as ${path}/.`
        : `# The base: this site's ${site} (a model the lab ships, on no hub); save its files into ${path}/ first.`,
    );
  } else if (base?.startsWith('local/')) {
    path = lastPart(base);
    lines.push(`# The base: the folder you imported as ${base}; put its path on your disk here.`);
  } else if (base === null) lines.push('# The base: the model the run started from; put its folder or hub id here.');
  lines.push(
    `lora = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(${JSON.stringify(path)}), ${JSON.stringify(adapter)})`,
  );
  return lines;
}

/** Writes each file under `dir`, making the folders of its path. */
async function writeInto(dir: WritableDir, files: { name: string; data: string | Uint8Array }[]): Promise<void> {
  for (const f of files) {
    const parts = f.name.split('/');
    let d = dir;
    for (const p of parts.slice(0, -1)) d = await d.getDirectoryHandle(p, { create: true });
    const w = await (await d.getFileHandle(parts[parts.length - 1], { create: true })).createWritable();
    await w.write(typeof f.data === 'string' ? f.data : new Blob([f.data as Uint8Array<ArrayBuffer>]));
    await w.close();
  }
}

export function Downloads() {
  const downloads = useLab((s) => s.downloads);
  const clear = useLab((s) => s.clearDownloads);
  const [last, setLast] = useState<LastExport | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!downloads) return;
    const given = downloads.files;
    clear();
    setError(null);
    if (!given.some((f) => f.name.includes('/'))) {
      for (const f of given) save(f.name, f.mime, f.data);
      setLast({ files: given.map((f) => ({ name: f.name, bytes: sizeOf(f.data) })) });
      return;
    }
    const dir = pendingDir;
    pendingDir = null;
    const givenFolders = [...new Set(given.map((f) => f.name.split('/')[0]))];
    void siteBaseFiles(given, givenFolders).then((base) => saveFolders([...given, ...base], dir));
  }, [downloads, clear]);
  /** Saves the export's folders: into the picked folder, else as one .zip. */
  const saveFolders = (files: ExportFile[], dir: WritableDir | null) => {
    const folders = [...new Set(files.map((f) => f.name.split('/')[0]))];
    const python = pythonLines(files, folders);
    if (dir) {
      writeInto(dir, files).then(
        () =>
          setLast({
            files: files.map((f) => ({ name: f.name, bytes: sizeOf(f.data) })),
            folder: { how: 'folder', where: dir.name, folders, python },
          }),
        (e: unknown) => setError(`Writing the folder into "${dir.name}" failed: ${(e as Error).message ?? e}`),
      );
      return;
    }
    // One .zip of the folders; its parts are the files' own arrays (a Blob takes them without another copy here).
    const zip = new Blob([...zipChunks(files.map((f) => ({ name: f.name, data: f.data })))] as BlobPart[], {
      type: 'application/zip',
    });
    const name = `${folders[0]}.zip`;
    save(name, 'application/zip', zip);
    setLast({ files: [{ name, bytes: zip.size }], folder: { how: 'zip', where: name, folders, python } });
  };
  if (error)
    return (
      <p className="error small" data-testid="last-export-error">
        {error}
      </p>
    );
  if (!last) return null;
  return (
    <div className="hint small" data-testid="last-export" data-files={last.files.map((f) => f.name).join(',')}>
      {last.folder ? (
        <>
          <p>
            {last.folder.how === 'zip'
              ? `Saved ${last.folder.where} (${last.files[0].bytes.toLocaleString('en-US')} bytes): unzip it to get `
              : `Wrote into the folder "${last.folder.where}": `}
            {last.folder.folders.map((f, i) => (
              <span key={f}>
                {i > 0 && ' and '}
                <code>{f}/</code>
              </span>
            ))}
            , the folder{last.folder.folders.length > 1 ? 's' : ''} transformers
            {last.folder.folders.length > 1 ? ' and PEFT load' : ' loads'} (float32 weights, the precision the lab
            trains in):
          </p>
          <pre data-testid="export-python" style={{ overflowX: 'auto' }}>
            {last.folder.python.join('\n')}
          </pre>
        </>
      ) : (
        <>Saved {last.files.map((f) => `${f.name} (${f.bytes.toLocaleString('en-US')} bytes)`).join(', ')}</>
      )}
    </div>
  );
}
