// The notices slice: messages that must not break the page (storage full, a step not saved, a GPU error, a
// failed request), the last few kept, each dismissable. One notice per problem: a notice with the key of one shown
// replaces it (the same text, or any reward_fn failure: a second attempt's message replaces the first's). Ids count
// per store.

import type { LabSlice } from '../slice';

export interface Notice {
  id: number;
  level: 'warning' | 'error';
  message: string;
  /** What problem it is about: a later notice with the same key replaces it. */
  key: string;
}

/** The key of a notice: its own, else the reward function's for any reward_fn message, else its text. */
export function noticeKey(message: string, key?: string): string {
  return key ?? (message.startsWith('reward_fn') ? 'reward_fn' : message);
}

/** Notices kept on the page; older ones drop off. */
const MAX_NOTICES = 8;

export interface NoticesState {
  notices: Notice[];
}

export interface NoticesActions {
  /** Shows a notice, replacing one with the same key (noticeKey). */
  addNotice(level: Notice['level'], message: string, key?: string): void;
  dismissNotice(id: number): void;
}

export type NoticesSlice = NoticesState & NoticesActions;

export const noticesSlice: LabSlice<NoticesSlice> = () => (set, get) => {
  let lastId = 0;
  return {
    notices: [],

    addNotice(level, message, key) {
      const k = noticeKey(message, key);
      const others = get().notices.filter((n) => n.key !== k);
      set({ notices: [...others, { id: ++lastId, level, message, key: k }].slice(-MAX_NOTICES) });
    },

    dismissNotice(id) {
      set({ notices: get().notices.filter((n) => n.id !== id) });
    },
  };
};
