// The lessons slice: the open lesson (from the panel or a ?lesson=<id> link), the learner's answer, its runs
// launched one after the other through the engine slice (each named by its label, all at one seed; while the
// lesson is open the charts show exactly its runs, selectors.ts chartRunIds, and the person's overlay is left as
// it was), the verdict of the lesson's check once every run is done, and each lesson's progress kept in the
// browser's storage. The open lesson's session is kept too: a reload mid-run finds its run interrupted, offers
// Resume, and the resumed run finishes the narration and the verdict. The lessons themselves are data
// (src/lessons); the rules of the Run button and the live narration are selectors.

import type { RunProgress } from '../../schema/run-types';
import { LESSON_DEFAULT_SEED, LESSONS, lessonById, type Lesson, type LessonVerdict } from '../../lessons';
import { lessonPreparedRunConfig } from '../../lessons/opening';
import { lessonRunConfig } from '../../lessons/results';
import { lessonRunResults } from '../lesson-results';
import { rolloutKey } from './inspector';
import { engineReady, isBusy, lessonRunBlocker } from '../selectors';
import { readStored, writeStored, type LabSlice } from '../slice';

/** What the learner has done in a lesson, kept across visits. */
export interface LessonProgress {
  /** The choice the learner made (null: not answered yet). */
  answer: number | null;
  /** The runs went to the end and the check gave a verdict at least once. */
  completed: boolean;
  /** The check observed the phenomenon at least once. */
  observed: boolean;
}

export const NO_PROGRESS: LessonProgress = { answer: null, completed: false, observed: false };

/** Where progress is kept; the version is in the name, so a new format starts afresh instead of misreading the old. */
export const LESSON_PROGRESS_KEY = 'rl-lab.lesson-progress.v1';

/** The stored progress, entry by entry; anything that is not a well-formed entry is left out (never thrown). */
export function parseLessonProgress(text: string | null): Record<string, LessonProgress> {
  let raw: unknown;
  try {
    raw = text === null ? null : JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
  const out: Record<string, LessonProgress> = {};
  for (const [id, e] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof e !== 'object' || e === null) continue;
    const { answer, completed, observed } = e as Record<string, unknown>;
    if (typeof completed !== 'boolean' || typeof observed !== 'boolean') continue;
    const choices = lessonById(id)?.question.choices.length ?? Infinity;
    const validAnswer = typeof answer === 'number' && Number.isInteger(answer) && answer >= 0 && answer < choices;
    out[id] = { answer: validAnswer ? answer : null, completed, observed };
  }
  return out;
}

/**
 * Where the lesson's runs stand. 'interrupted': a run was training when the page closed (a reload); the engine kept
 * it as interrupted, and the lesson offers to resume it.
 */
export type LessonPhase = 'ready' | 'running' | 'done' | 'stopped' | 'interrupted';

/** The open lesson and its runs in this visit. */
export interface LessonSession {
  lessonId: string;
  /** The seed every run of the lesson shares. */
  seed: number;
  phase: LessonPhase;
  /** The engine's run id of each run launched at this seed, by run key. */
  runIds: Record<string, string>;
  /** Index (in lesson.runs) of the run launched last. */
  current: number;
  /** The engine's current run when run `current` was launched: the launched run is the next one it reports. */
  launchedOver: string | null;
  /** The check's verdict, once every run is done. */
  verdict: LessonVerdict | null;
  /** Why the runs stopped before the verdict. */
  stopReason: string | null;
  /** The current run was resumed from its saved state: until the engine reports it loading or training, a stale "interrupted" is not a stop. */
  resuming?: boolean;
}

/** Where the open lesson's session is kept across a reload (one at a time: the lesson open last). */
export const LESSON_SESSION_KEY = 'rl-lab.lesson-session.v1';

/**
 * The stored session of lesson `lessonId`, or null (none, another lesson's, or not well-formed: never thrown). A
 * session that was running when the page closed comes back 'interrupted'.
 */
export function parseLessonSession(text: string | null, lessonId: string): LessonSession | null {
  let raw: unknown;
  try {
    raw = text === null ? null : JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  const lesson = lessonById(lessonId);
  if (!lesson || r.lessonId !== lessonId) return null;
  const phases: LessonPhase[] = ['ready', 'running', 'done', 'stopped', 'interrupted'];
  if (!phases.includes(r.phase as LessonPhase) || !Number.isInteger(r.seed) || !Number.isInteger(r.current))
    return null;
  const current = r.current as number;
  if (current < 0 || current >= lesson.runs.length) return null;
  if (typeof r.runIds !== 'object' || r.runIds === null) return null;
  const runIds: Record<string, string> = {};
  for (const run of lesson.runs) {
    const id = (r.runIds as Record<string, unknown>)[run.key];
    if (typeof id === 'string') runIds[run.key] = id;
  }
  const verdict = r.verdict as LessonVerdict | null;
  const verdictOk =
    verdict !== null &&
    typeof verdict === 'object' &&
    typeof verdict.observed === 'boolean' &&
    typeof verdict.summary === 'string' &&
    typeof verdict.values === 'object';
  let phase = r.phase as LessonPhase;
  if (phase === 'running' || phase === 'interrupted')
    phase = runIds[lesson.runs[current].key] !== undefined ? 'interrupted' : 'ready';
  if (phase === 'done' && !verdictOk) phase = 'stopped';
  return {
    lessonId,
    seed: r.seed as number,
    phase,
    runIds,
    current,
    launchedOver: null,
    verdict: phase === 'done' && verdictOk ? verdict : null,
    stopReason: typeof r.stopReason === 'string' && phase === 'stopped' ? r.stopReason : null,
  };
}

export interface LessonsState {
  lesson: LessonSession | null;
  /** Progress by lesson id (every lesson listed has an entry only once the learner did something in it). */
  lessonProgress: Record<string, LessonProgress>;
}

export interface LessonsActions {
  /** Opens a lesson and colours the inspector by its first plane; an unknown id is a notice naming the known ones. */
  openLesson(id: string): void;
  closeLesson(): void;
  /** The learner's prediction, once per lesson (it is kept; a prediction changed after the run would teach nothing). */
  answerLesson(choice: number): void;
  /** Launches the lesson's runs, one after the other, at the session's seed (or `seed`). Blocked as lessonRunBlocker says. */
  startLesson(seed?: number): void;
  /** The same runs at the next seed. */
  rerunLessonWithAnotherSeed(): void;
  /** The engine's progress: follows the lesson's current run, launches the next one, takes the verdict at the end. */
  lessonRunProgressed(p: RunProgress): void;
  /** The engine refused to configure the launched run (the message is shown as a notice too). */
  lessonRunRefused(message: string): void;
  /** Before the open lesson's runs start: its first run is prepared (EngineActions.prepareRun), unless it is supervised. */
  prepareLessonRun(): void;
  /** Resumes the lesson's interrupted run from its saved state; the lesson follows it to its verdict. */
  resumeLesson(): void;
  /** Loads the records of the lesson's runs that the page does not hold yet (after a reload), once each. */
  loadLessonRuns(): void;
}

export type LessonsSlice = LessonsState & LessonsActions;

/** Longest part of an unknown lesson id a notice quotes (a link may carry any text, megabytes of it). */
const QUOTED_LESSON_ID = 40;

/** An unknown lesson id as a notice names it: JSON-escaped, cut to QUOTED_LESSON_ID characters with its length. */
function quotedLessonId(id: string): string {
  return id.length <= QUOTED_LESSON_ID
    ? JSON.stringify(id)
    : `${JSON.stringify(id.slice(0, QUOTED_LESSON_ID))}... (${id.length} characters)`;
}

const idle = (lessonId: string, seed: number): LessonSession => ({
  lessonId,
  seed,
  phase: 'ready',
  runIds: {},
  current: 0,
  launchedOver: null,
  verdict: null,
  stopReason: null,
});

export const lessonsSlice: LabSlice<LessonsSlice> =
  ({ storage }) =>
  (set, get) => {
    const progressOf = (id: string) => get().lessonProgress[id] ?? NO_PROGRESS;
    const putProgress = (id: string, p: Partial<LessonProgress>) => {
      const lessonProgress = { ...get().lessonProgress, [id]: { ...progressOf(id), ...p } };
      set({ lessonProgress });
      writeStored(storage, LESSON_PROGRESS_KEY, JSON.stringify(lessonProgress));
    };
    const session = () => get().lesson;
    /** Sets the session and keeps it in storage (null: the lesson closed; the stored session stays for its return). */
    const putSession = (lesson: LessonSession | null) => {
      set({ lesson });
      if (lesson) writeStored(storage, LESSON_SESSION_KEY, JSON.stringify(lesson));
    };
    const patch = (p: Partial<LessonSession>) => {
      const s = session();
      if (s) putSession({ ...s, ...p });
    };
    /** Run ids whose records were asked for by loadLessonRuns (each once per visit). */
    const asked = new Set<string>();
    const stop = (reason: string) => patch({ phase: 'stopped', stopReason: reason });

    /** Shows run `index`'s config as the edited one and starts it as a new run named by its label. */
    const launch = (lesson: Lesson, index: number) => {
      const run = lesson.runs[index];
      patch({ current: index, launchedOver: get().progress.runId });
      get().showConfig(lessonRunConfig(lesson, run, session()!.seed), run.preset);
      if (!get().startNewRun(run.label, run.mode)) stop(`"${run.label}" could not start (see the notices).`);
    };

    const finish = (lesson: Lesson) => {
      const s = get();
      const on = s.lesson!;
      let verdict: LessonVerdict;
      try {
        const results = lessonRunResults(
          lesson,
          on,
          s.views,
          (runId, step) => s.rollouts[rolloutKey(runId, step)]?.groups,
        );
        verdict = lesson.check.evaluate(results);
      } catch (e) {
        return stop(`The lesson's check could not be evaluated: ${e instanceof Error ? e.message : String(e)}`);
      }
      patch({ phase: 'done', verdict });
      putProgress(lesson.id, { completed: true, observed: progressOf(lesson.id).observed || verdict.observed });
    };

    return {
      lesson: null,
      lessonProgress: parseLessonProgress(readStored(storage, LESSON_PROGRESS_KEY)),

      openLesson(id) {
        const lesson = lessonById(id);
        if (!lesson) {
          get().addNotice(
            'warning',
            `There is no lesson ${quotedLessonId(id)}. The lessons are: ${LESSONS.map((l) => l.id).join(', ')}.`,
          );
          return;
        }
        if (session()?.lessonId === id) return;
        putSession(parseLessonSession(readStored(storage, LESSON_SESSION_KEY), id) ?? idle(id, LESSON_DEFAULT_SEED));
        get().loadLessonRuns();
        const plane = lesson.highlight.planes[0];
        if (plane) get().setColorBy(plane);
        get().prepareLessonRun();
      },

      prepareLessonRun() {
        const s = session();
        const lesson = s && lessonById(s.lessonId);
        const config = lesson && s.phase === 'ready' ? lessonPreparedRunConfig(lesson, s.seed) : null;
        if (config) get().prepareRun(config);
      },

      closeLesson() {
        set({ lesson: null });
      },

      answerLesson(choice) {
        const s = session();
        const lesson = s && lessonById(s.lessonId);
        if (!lesson || progressOf(lesson.id).answer !== null) return;
        if (!Number.isInteger(choice) || choice < 0 || choice >= lesson.question.choices.length) return;
        putProgress(lesson.id, { answer: choice });
      },

      startLesson(seed) {
        const s = session();
        const lesson = s && lessonById(s.lessonId);
        if (!lesson || lessonRunBlocker(get()) !== null) return;
        // The runs of an earlier go leave the charts (the charts show the session's runs only).
        putSession({ ...idle(lesson.id, seed ?? s.seed), phase: 'running' });
        launch(lesson, 0);
      },

      rerunLessonWithAnotherSeed() {
        const s = session();
        if (s) get().startLesson(s.seed + 1);
      },

      lessonRunProgressed(p) {
        const s = session();
        const lesson = s && lessonById(s.lessonId);
        if (!lesson || s.phase !== 'running') return;
        const run = lesson.runs[s.current];
        let runId = s.runIds[run.key];
        if (runId === undefined) {
          // Still the run that was current before the launch, or nothing yet: the launched run has not started.
          if (p.runId === null || p.runId === s.launchedOver) return;
          if (p.name !== run.label)
            return stop(`Another run ("${p.name}") took the engine before "${run.label}" started.`);
          runId = p.runId;
          patch({ runIds: { ...s.runIds, [run.key]: runId } });
        }
        if (s.resuming) {
          // The resumed run: the engine reports it loading, then training; what came before is the old state.
          if (p.runId !== runId || (p.status !== 'loading' && p.status !== 'running' && p.status !== 'done')) return;
          patch({ resuming: false });
        }
        if (p.runId !== runId)
          return stop(
            `Another run${p.name ? ` ("${p.name}")` : ''} took the engine while "${run.label}" was training; run the lesson again.`,
          );
        if (p.status === 'failed' || p.status === 'interrupted')
          return stop(
            `"${run.label}" ${p.status === 'failed' ? 'failed' : 'was interrupted'}${p.message ? `: ${p.message}` : ''}. Run the lesson again.`,
          );
        if (p.status !== 'done') return;
        if (s.current + 1 < lesson.runs.length) return launch(lesson, s.current + 1);
        finish(lesson);
      },

      resumeLesson() {
        const s = session();
        const lesson = s && lessonById(s.lessonId);
        if (!lesson || s.phase !== 'interrupted' || isBusy(get()) || !engineReady(get())) return;
        const runId = s.runIds[lesson.runs[s.current].key];
        if (runId === undefined || !get().runs.some((h) => h.id === runId)) return;
        patch({ phase: 'running', resuming: true, stopReason: null, launchedOver: null });
        get().resumeRun(runId);
      },

      loadLessonRuns() {
        const s = session();
        if (!s) return;
        for (const id of Object.values(s.runIds))
          if (!asked.has(id) && !get().views[id] && get().runs.some((h) => h.id === id)) {
            asked.add(id);
            get().loadRunRecords(id);
          }
      },

      lessonRunRefused(message) {
        const s = session();
        if (s?.phase === 'running' && s.runIds[lessonById(s.lessonId)?.runs[s.current]?.key ?? ''] === undefined)
          stop(`The engine refused the lesson's run: ${message}`);
      },
    };
  };
