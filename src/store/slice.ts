// The shape every slice of the lab store has: a function of the store's dependencies (the engine link, storage) that
// returns a zustand StateCreator over the whole LabState, producing that slice's own state and actions. Slices
// read and call each other through `get()`; each owns the fields it returns.

import type { StateCreator } from 'zustand';
import type { EngineLink } from './engine-link';
import type { LabState } from './index';

/** A small synchronous key-value store (the browser's localStorage, or a test's map). */
export type KeyValueStorage = Pick<Storage, 'getItem' | 'setItem'>;

/** `key`'s value, or null where storage is absent or refuses to be read (a browser's privacy setting). */
export function readStored(storage: KeyValueStorage | null, key: string): string | null {
  try {
    return storage?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

/** Keeps `value` under `key` where storage allows; a full or refusing storage keeps it on the page for this visit. */
export function writeStored(storage: KeyValueStorage | null, key: string, value: string): void {
  try {
    storage?.setItem(key, value);
  } catch {
    // Storage full or refused: nothing outlives the page, nothing else breaks.
  }
}

/** What a store gives each of its slices. */
export interface SliceDeps {
  /** The line to this store's engine worker. */
  link: EngineLink;
  /** Where small settings outlive the page (lesson progress); null where there is none. */
  storage: KeyValueStorage | null;
}

/** A slice: its state and actions `S`, made per store. */
export type LabSlice<S> = (deps: SliceDeps) => StateCreator<LabState, [], [], S>;
