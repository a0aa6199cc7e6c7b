// The Lessons panel: the list of lessons with each one's progress, and the open lesson: its question (answered
// before Run; the right answer and its explanation only once the run has shown it, or when asked), what to look
// at, its runs, a run a reload interrupted offered with Resume at the top, narration quoting their live values, the
// check's verdict with its numbers, the explanation and what to try next. The lesson's rules (may it run, where its
// runs are, the narration) are the store's selectors; this is layout only.
import { DocText } from './DocText';
import { useEffect, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { LESSONS, narrationNumber, useLab, type Lesson } from '../store';
import { COLOR_LABELS } from '../store/explain';
import {
  engineReady,
  isBusy,
  lessonChartTitles,
  lessonInterruptedRun,
  lessonNarration,
  lessonProgressOf,
  lessonRunBlocker,
  lessonRunStates,
  openedLesson,
  type LessonRunBlocker,
} from '../store/selectors';

/** Why Run is greyed out, in words. */
const BLOCKED: Record<LessonRunBlocker, string> = {
  closed: '',
  answer: 'Answer the question first: predict, then run.',
  running: "The lesson's runs are training.",
  busy: 'Another run is training: pause or reset it first.',
  engine: 'The engine is not ready yet (see the GPU line above).',
};

function ProgressMarks({ lessonId }: { lessonId: string }) {
  const p = useLab((s) => lessonProgressOf(s, lessonId));
  const marks = [p.answer !== null && 'answered', p.completed && 'ran', p.observed && 'observed'].filter(Boolean);
  return (
    <span
      className="lesson-marks"
      data-testid={`lesson-progress-${lessonId}`}
      data-answered={p.answer !== null}
      data-completed={p.completed}
      data-observed={p.observed}
    >
      {marks.length ? marks.join(' · ') : 'not started'}
    </span>
  );
}

function LessonList() {
  const openLesson = useLab((s) => s.openLesson);
  return (
    <ol className="lesson-list">
      {LESSONS.map((l) => (
        <li key={l.id}>
          <button type="button" className="link" data-testid={`lesson-item-${l.id}`} onClick={() => openLesson(l.id)}>
            {l.title}
          </button>{' '}
          <ProgressMarks lessonId={l.id} />
        </li>
      ))}
    </ol>
  );
}

function Question({ lesson }: { lesson: Lesson }) {
  const answer = useLab((s) => lessonProgressOf(s, lesson.id).answer);
  const ranBefore = useLab((s) => lessonProgressOf(s, lesson.id).completed);
  const phase = useLab((s) => s.lesson?.phase);
  const answerLesson = useLab((s) => s.answerLesson);
  // Predict first, kept honest: the answer waits for the run to show the phenomenon (or for the person to ask).
  const [asked, setAsked] = useState(false);
  const revealed = answer !== null && (asked || ranBefore || phase === 'done');
  const q = lesson.question;
  return (
    <div className="lesson-question">
      <p className="lesson-prompt">
        <strong>Predict first.</strong> {q.prompt}
      </p>
      <div className="lesson-choices" role="group" aria-label="choices">
        {q.choices.map((c, i) => (
          <button
            type="button"
            key={i}
            className={`choice${answer === i ? ' chosen' : ''}${revealed && i === q.answer ? ' right' : ''}`}
            data-testid={`lesson-choice-${i}`}
            disabled={answer !== null}
            aria-pressed={answer === i}
            onClick={() => answerLesson(i)}
          >
            {c}
          </button>
        ))}
      </div>
      {answer !== null && !revealed && (
        <p className="lesson-prediction small" data-testid="lesson-prediction">
          Your prediction is kept; the run will tell.{' '}
          <button type="button" className="link small" data-testid="lesson-reveal" onClick={() => setAsked(true)}>
            show the answer now
          </button>
        </p>
      )}
      {revealed && (
        <p
          className={`lesson-feedback ${answer === q.answer ? 'pass' : 'fail'}`}
          data-testid="lesson-answer-feedback"
          data-right={answer === q.answer}
        >
          <strong>{answer === q.answer ? 'Right.' : `Not quite: the answer is "${q.choices[q.answer]}".`}</strong>{' '}
          {q.why}
        </p>
      )}
    </div>
  );
}

/** One run of the lesson: waiting, training (its step), done or stopped. */
function RunLine({ lesson, index }: { lesson: Lesson; index: number }) {
  const state = useLab((s) => lessonRunStates(s)[index]?.state);
  const step = useLab((s) => lessonRunStates(s)[index]?.step);
  const run = lesson.runs[index];
  return (
    <li data-testid={`lesson-run-${run.key}`} data-state={state}>
      <span className={`run-state ${state}`}>{state === 'training' ? `step ${step}/${lesson.steps}` : state}</span>{' '}
      {run.label}
    </li>
  );
}

/** A run of the lesson that a reload interrupted: where it stopped, and Resume (the lesson follows it to its verdict). */
function Interrupted() {
  // Each part selected on its own: the selector builds a new object each time, its parts are stable.
  const header = useLab((s) => lessonInterruptedRun(s)?.header ?? null);
  const label = useLab((s) => lessonInterruptedRun(s)?.label ?? '');
  const steps = useLab((s) => lessonInterruptedRun(s)?.steps ?? 0);
  const run = header && { header, label, steps };
  const resumeLesson = useLab((s) => s.resumeLesson);
  const blocked = useLab((s) => isBusy(s) || !engineReady(s));
  if (!run) return null;
  return (
    <div className="lesson-interrupted" data-testid="lesson-interrupted" role="status">
      <p>
        <strong>
          Your run "{run.label}" stopped at step {run.header.step}/{run.steps}
        </strong>{' '}
        when the page closed; its saved state is kept{run.header.savedStep > 0 ? ` (step ${run.header.savedStep})` : ''}
        .
      </p>
      <button type="button" data-testid="lesson-resume" disabled={blocked} onClick={resumeLesson}>
        Resume it
      </button>
    </div>
  );
}

/**
 * After an answer the Run is the next thing to do: it takes the keyboard focus as soon as it can be pressed (the
 * engine or a model load may still hold it), unless the person has moved the focus out of the lesson meanwhile.
 */
function useFocusRunAfterAnswer(lessonId: string, enabled: boolean) {
  const answered = useLab((s) => lessonProgressOf(s, lessonId).answer !== null);
  const run = useRef<HTMLButtonElement>(null);
  const wasAnswered = useRef(answered);
  const pending = useRef(false);
  useEffect(() => {
    if (answered && !wasAnswered.current) pending.current = true;
    wasAnswered.current = answered;
    if (!pending.current || !enabled || !run.current) return;
    pending.current = false;
    const active = document.activeElement;
    if (!active || active === document.body || run.current.closest('.lesson')?.contains(active)) run.current.focus();
  }, [answered, enabled]);
  return run;
}

function RunBar({ lesson }: { lesson: Lesson }) {
  const session = useLab((s) => s.lesson!);
  const blocker = useLab(lessonRunBlocker);
  const runButton = useFocusRunAfterAnswer(lesson.id, blocker === null);
  const startLesson = useLab((s) => s.startLesson);
  const rerun = useLab((s) => s.rerunLessonWithAnotherSeed);
  const ranOnce = session.phase === 'done' || session.phase === 'stopped';
  return (
    <div className="lesson-runs" data-testid="lesson-runs" data-phase={session.phase}>
      <div className="buttons">
        <button
          ref={runButton}
          type="button"
          data-testid="lesson-run"
          disabled={blocker !== null}
          onClick={() => startLesson()}
          title={blocker ? BLOCKED[blocker] : ''}
        >
          {ranOnce ? `Run again (seed ${session.seed})` : 'Run'}
        </button>
        {ranOnce && (
          <button
            type="button"
            className="secondary"
            data-testid="lesson-rerun"
            disabled={blocker !== null}
            onClick={rerun}
          >
            Rerun with another seed
          </button>
        )}
      </div>
      {blocker && blocker !== 'running' && (
        <p className="hint small" data-testid="lesson-blocked">
          {BLOCKED[blocker]}
        </p>
      )}
      <ul className="lesson-run-list small">
        {lesson.runs.map((r, i) => (
          <RunLine key={r.key} lesson={lesson} index={i} />
        ))}
      </ul>
      <p className="hint small">
        {lesson.runs.length > 1
          ? `The runs share seed ${session.seed}, so they differ only in what their names say.`
          : `Seed ${session.seed}.`}
      </p>
      {session.stopReason && <p className="lesson-feedback fail">{session.stopReason}</p>}
    </div>
  );
}

function Narration() {
  const lines = useLab(useShallow(lessonNarration));
  const smoothing = useLab((s) => s.smoothing);
  return (
    <div className="lesson-narration" data-testid="lesson-narration">
      {lines.map((t, i) => (
        <p key={i}>{t}</p>
      ))}
      <p className="hint small" data-testid="lesson-narration-smoothing">
        {smoothing > 0
          ? `Values as the charts draw them: smoothed (weight ${smoothing}), not the last step alone.`
          : 'Values as the charts draw them: the last step (smoothing is off).'}
      </p>
    </div>
  );
}

function Verdict({ lesson }: { lesson: Lesson }) {
  const verdict = useLab((s) => s.lesson?.verdict ?? null);
  if (!verdict) return null;
  return (
    <div
      className={`lesson-verdict ${verdict.observed ? 'pass' : 'fail'}`}
      data-testid="lesson-verdict"
      data-observed={verdict.observed}
    >
      <p className={`summary ${verdict.observed ? 'pass' : 'fail'}`}>
        {verdict.observed ? 'Observed' : 'Not this time'}
      </p>
      <p className="small">Claim: {lesson.check.claim}</p>
      <p>{verdict.summary}</p>
      <table className="lesson-values" data-testid="lesson-values">
        <tbody>
          {Object.entries(verdict.values).map(([k, v]) => (
            <tr key={k} data-testid="lesson-value">
              <th scope="row">{k}</th>
              <td className="num">{narrationNumber(v)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!verdict.observed && (
        <p data-testid="lesson-why-not">
          <strong>Why this can happen:</strong> {lesson.check.whyNot}
        </p>
      )}
      <p data-testid="lesson-explain">{lesson.explain}</p>
      <p data-testid="lesson-next">
        <strong>Try next:</strong> {lesson.next}
      </p>
    </div>
  );
}

/** The inspector planes the lesson points at: one button each colours the inspector's tokens by it. */
function Planes({ lesson }: { lesson: Lesson }) {
  const colorBy = useLab((s) => s.colorBy);
  const setColorBy = useLab((s) => s.setColorBy);
  if (!lesson.highlight.planes.length) return null;
  return (
    <p className="lesson-planes small">
      Inspector tokens coloured by:{' '}
      {lesson.highlight.planes.map((plane) => (
        <button
          type="button"
          key={plane}
          className={`secondary small${colorBy === plane ? ' chosen' : ''}`}
          data-testid={`lesson-plane-${plane}`}
          aria-pressed={colorBy === plane}
          onClick={() => setColorBy(plane)}
        >
          {COLOR_LABELS[plane]}
        </button>
      ))}
    </p>
  );
}

/** Brings a chart into view and flashes its outline (the lesson's charts keep a steady outline of their own). */
function showChart(id: string): void {
  const chart = document.querySelector<HTMLElement>(`[data-testid="chart-${id}"]`);
  if (!chart) return;
  const still = matchMedia('(prefers-reduced-motion: reduce)').matches;
  chart.scrollIntoView({ behavior: still ? 'auto' : 'smooth', block: 'center' });
  if (!still)
    chart.animate(
      [
        { outlineColor: 'var(--accent)', outlineWidth: '5px' },
        { outlineColor: 'var(--accent)', outlineWidth: '2px' },
      ],
      { duration: 1200, iterations: 2 },
    );
}

/** The charts the lesson points at ("lesson: look here" on the charts): one button each scrolls to it. */
function LookHere({ lesson }: { lesson: Lesson }) {
  const charts = lessonChartTitles(lesson);
  if (!charts.length) return null;
  return (
    <span className="lesson-look-here small">
      Look here:{' '}
      {charts.map((c) => (
        <button
          type="button"
          key={c.id}
          className="secondary small"
          data-testid={`lesson-look-${c.id}`}
          onClick={() => showChart(c.id)}
        >
          {c.title} ↓
        </button>
      ))}
    </span>
  );
}

function OpenLesson({ lesson }: { lesson: Lesson }) {
  const phase = useLab((s) => s.lesson!.phase);
  const closeLesson = useLab((s) => s.closeLesson);
  const loadLessonRuns = useLab((s) => s.loadLessonRuns);
  const runsListed = useLab((s) => s.runs.length);
  // After a reload the lesson's runs are in storage: their records come back to the charts once the list knows them.
  useEffect(() => loadLessonRuns(), [loadLessonRuns, runsListed]);
  return (
    <article className="lesson" data-testid="lesson" data-lesson={lesson.id} data-phase={phase}>
      <div className="lesson-head">
        <button type="button" className="link small" data-testid="lesson-close" onClick={closeLesson}>
          ← all lessons
        </button>
        <a
          className="small"
          href={`?lesson=${lesson.id}`}
          data-testid="lesson-link"
          title="a link that opens this lesson"
        >
          link to this lesson
        </a>
      </div>
      <h3 data-testid="lesson-title">{lesson.title}</h3>
      <Interrupted />
      <p className="small">
        Your progress: <ProgressMarks lessonId={lesson.id} />
      </p>
      <p className="small muted" data-testid="lesson-source">
        <DocText text={lesson.source} />
      </p>
      <Question lesson={lesson} />
      <p className="lesson-look">
        <strong>Look at:</strong> {lesson.look} <LookHere lesson={lesson} />
      </p>
      <RunBar lesson={lesson} />
      <Planes lesson={lesson} />
      {phase !== 'ready' && phase !== 'interrupted' && <Narration />}
      <Verdict lesson={lesson} />
    </article>
  );
}

export function LessonsPanel() {
  const lesson = useLab(openedLesson);
  return (
    <section className="panel lessons" aria-labelledby="lessons-title" data-testid="lessons-panel">
      <h2 id="lessons-title">Lessons</h2>
      {lesson ? (
        <OpenLesson lesson={lesson} />
      ) : (
        <>
          <p className="hint small">
            Guided experiments: predict what happens, run it, and see whether the numbers agree.
          </p>
          <LessonList />
        </>
      )}
    </section>
  );
}
