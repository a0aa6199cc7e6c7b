// Placeholder of the Origin Private File System SnapshotStore until it lands: every call says it is missing.
import type { KeptModel } from '../hub/manager-types';
import type { SnapshotStore } from '../hub/snapshot';

export interface OpfsSnapshotStore extends SnapshotStore {
  list(): Promise<KeptModel[]>;
  remove(repoId: string, revision: string): Promise<void>;
}

export function opfsSnapshotStore(_root: FileSystemDirectoryHandle): OpfsSnapshotStore {
  const missing = (): never => {
    throw new Error('hub models cannot be kept in this browser yet');
  };
  return {
    complete: async () => null,
    partial: missing,
    read: missing,
    committedSize: missing,
    finish: missing,
    list: async () => [],
    remove: missing,
  };
}
