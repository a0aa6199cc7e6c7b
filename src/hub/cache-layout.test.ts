// The hub cache's layout and records, shared by the CLI's folder and the page's origin-private storage: paths as
// huggingface_hub names them, and the manifest, ref and download record each refused when a file a store reads
// back is not one (another commit, a name that climbs out of the snapshot, a size that is no byte count).
import { describe, expect, it } from 'vitest';
import {
  incompletePath,
  modelFolderName,
  parseDownloadRecord,
  parseManifest,
  parseRef,
  recordText,
  recordTotal,
  refPath,
  repoIdOfFolder,
  snapshotFilePath,
} from './cache-layout';
import { parseHubId } from '../schema/hub-id';

const COMMIT = 'a'.repeat(40);
const repo = parseHubId('Org-1/name.v2@dev');

describe('hub cache layout', () => {
  it("names folders as huggingface_hub's cache does", () => {
    expect(modelFolderName(repo)).toBe('models--Org-1--name.v2');
    expect(refPath(repo)).toEqual(['models--Org-1--name.v2', 'refs', 'dev']);
    expect(snapshotFilePath(repo, COMMIT, 'onnx/model.onnx')).toEqual([
      'models--Org-1--name.v2',
      'snapshots',
      COMMIT,
      'onnx',
      'model.onnx',
    ]);
    expect(incompletePath(repo, COMMIT, 'onnx/model.onnx').at(-1)).toBe('model.onnx.incomplete');
    expect(repoIdOfFolder('models--Org-1--name.v2')).toBe('Org-1/name.v2');
    for (const other of ['datasets--a--b', 'models--ab', 'models----b', 'models--a--', 'hub'])
      expect(repoIdOfFolder(other)).toBeNull();
  });

  it('reads a ref only when it can name a snapshot folder', () => {
    expect(parseRef(`${COMMIT}\n`)).toBe(COMMIT);
    for (const bad of ['', '..', '../x', 'a/b', 'a b']) expect(parseRef(bad), bad).toBeNull();
  });

  it('reads a manifest only for its own commit, with relative names and byte counts', () => {
    const manifest = {
      repo: 'Org-1/name.v2',
      revision: 'dev',
      commit: COMMIT,
      files: [{ name: 'config.json', size: 12 }],
    };
    expect(parseManifest(recordText(manifest), COMMIT)).toEqual(manifest);
    expect(parseManifest(recordText(manifest), 'b'.repeat(40))).toBeNull();
    expect(parseManifest('{', COMMIT)).toBeNull();
    expect(parseManifest('null', COMMIT)).toBeNull();
    for (const files of [
      [{ name: '../escape', size: 1 }],
      [{ name: 'a//b', size: 1 }],
      [{ name: 'x', size: -1 }],
      [{ name: 'x', size: 1.5 }],
      [{ name: 'x' }],
      'x',
    ])
      expect(parseManifest(JSON.stringify({ ...manifest, files }), COMMIT), JSON.stringify(files)).toBeNull();
  });

  it('reads a download record, unknown sizes kept as null, and totals it only when every size is known', () => {
    const record = {
      repo: 'Org-1/name.v2',
      revision: 'dev',
      commit: COMMIT,
      origin: 'https://huggingface.co',
      files: [
        { name: 'config.json', size: 12 },
        { name: 'model.safetensors', size: 1000 },
      ],
    };
    expect(parseDownloadRecord(recordText(record))).toEqual(record);
    expect(recordTotal(record)).toBe(1012);
    const unknown = { ...record, files: [...record.files, { name: 'tokenizer.json', size: null }] };
    expect(recordTotal(parseDownloadRecord(recordText(unknown)) ?? record)).toBeNull();
    expect(parseDownloadRecord(JSON.stringify({ ...record, origin: 3 }))).toBeNull();
    expect(parseDownloadRecord(JSON.stringify({ ...record, files: [{ name: '..', size: 1 }] }))).toBeNull();
    expect(parseDownloadRecord('[')).toBeNull();
  });
});
