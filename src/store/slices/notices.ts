// The notices slice: messages that must not break the page (storage full, a step not saved, a GPU error, a
// failed request), the last few kept, each dismissable. Ids count per store.

import type { LabSlice } from '../slice';

export interface Notice {
  id: number;
  level: 'warning' | 'error';
  message: string;
}

/** Notices kept on the page; older ones drop off. */
const MAX_NOTICES = 8;

export interface NoticesState {
  notices: Notice[];
}

export interface NoticesActions {
  addNotice(level: Notice['level'], message: string): void;
  dismissNotice(id: number): void;
}

export type NoticesSlice = NoticesState & NoticesActions;

export const noticesSlice: LabSlice<NoticesSlice> = () => (set, get) => {
  let lastId = 0;
  return {
    notices: [],

    addNotice(level, message) {
      set({ notices: [...get().notices, { id: ++lastId, level, message }].slice(-MAX_NOTICES) });
    },

    dismissNotice(id) {
      set({ notices: get().notices.filter((n) => n.id !== id) });
    },
  };
};
