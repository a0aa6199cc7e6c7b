// The lesson a page opens on, read from its address alone, and the run it prepares for that lesson: what the store
// does when the page loads (initConfig opens the lesson, prepareLessonRun prepares its first run), said once so that
// the page's entry can ask the engine worker for the same run before the app has loaded (src/main.tsx).

import type { RLConfig } from '../schema/config';
import { FIRST_LESSON, LESSON_DEFAULT_SEED, lessonById, type Lesson } from './index';
import { lessonRunConfig } from './results';

/** The lesson a page with this query string opens: ?lesson=<id>, or the first lesson when there is no query at all. */
export function openingLessonId(search: string): string | null {
  const params = new URLSearchParams(search);
  const lesson = params.get('lesson');
  return lesson !== null || [...params.keys()].length === 0 ? (lesson ?? FIRST_LESSON.id) : null;
}

/**
 * The run a page prepares while a lesson's question is read: its first run at `seed`, unless that run is supervised
 * (a prepared run is an RL run).
 */
export function lessonPreparedRunConfig(lesson: Lesson, seed: number): RLConfig | null {
  const first = lesson.runs[0];
  return first && first.mode !== 'sft' ? lessonRunConfig(lesson, first, seed) : null;
}

/** The prepared run of the lesson a page with this query string opens (at the lesson's default seed), if any. */
export function openingLessonRunConfig(search: string): RLConfig | null {
  const id = openingLessonId(search);
  const lesson = id === null ? undefined : lessonById(id);
  return lesson ? lessonPreparedRunConfig(lesson, LESSON_DEFAULT_SEED) : null;
}
