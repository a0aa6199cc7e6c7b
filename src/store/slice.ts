// The shape every slice of the lab store has: a function of the store's dependencies (the engine link) that
// returns a zustand StateCreator over the whole LabState, producing that slice's own state and actions. Slices
// read and call each other through `get()`; each owns the fields it returns.

import type { StateCreator } from 'zustand';
import type { EngineLink } from './engine-link';
import type { LabState } from './index';

/** What a store gives each of its slices. */
export interface SliceDeps {
  /** The line to this store's engine worker. */
  link: EngineLink;
}

/** A slice: its state and actions `S`, made per store. */
export type LabSlice<S> = (deps: SliceDeps) => StateCreator<LabState, [], [], S>;
