// The person's own prompts as a task: a list of prompts with their answers, read from JSONL (one
// {"prompt": ..., "answer": ...} per line) or CSV (a header row naming the prompt and answer columns), held out
// one in ten by a hash of the prompt's text, and verified by exact match (or numeric equality when the answer is a
// number: "3.50" and "3.5" agree). A row may name the teacher that scores it under multi-teacher distillation
// (TRL's `teacher_id` column). Malformed files are refused with the line and what is wrong. Not a file
// picker (the config panel has one) and not a generator: the items are the list's.

import { splitCsvLine } from '../core/csv';
import { defineTask, show, splitOfKey, type Check, type TaskFactory } from './task';

/** The task's name in the config (`task: prompts`); the list is the config's `prompts` text. */
export const PROMPT_LIST_TASK = 'prompts';

/** Longest prompt and answer accepted, in characters (the models' contexts are 64-256 tokens). */
export const MAX_PROMPT_CHARS = 200;
export const MAX_ANSWER_CHARS = 100;
/** Longest teacher_id accepted, in characters (the teachers knob's ids are at most 64). */
export const MAX_TEACHER_ID_CHARS = 64;

/** The optional column naming a row's teacher (multi-teacher distillation), TRL's name for it. */
export const TEACHER_ID_COLUMN = 'teacher_id';

/** A prompt list that cannot be used; the message names the line and what is wrong with it. */
export class PromptListError extends Error {
  override name = 'PromptListError';
}

/** One prompt of the list and where it came from. */
export interface PromptListItem {
  prompt: string;
  answer: string;
  /** The teacher that scores this prompt (the teachers knob's id), or null: the default teacher. */
  teacherId: string | null;
  line: number;
}

/** Printable ASCII only: the characters the lab's tokenizer has. */
const PRINTABLE = /^[\x20-\x7e]*$/;
const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** The fields of one CSV line (RFC 4180 quoting), or the line's error when a quoted field is not closed. */
function csvFields(line: string, lineNo: number): string[] {
  const fields = splitCsvLine(line);
  if (fields === null) throw new PromptListError(`line ${lineNo}: a quoted field is not closed`);
  return fields;
}

/** Checks one prompt or answer: text, not empty, printable ASCII (the lab's tokenizer), not too long. */
function checkText(what: 'prompt' | 'answer', v: unknown, lineNo: number): string {
  if (typeof v === 'number' && Number.isFinite(v)) v = String(v);
  if (typeof v !== 'string')
    throw new PromptListError(`line ${lineNo}: "${what}" must be text, got ${v === null ? 'null' : typeof v}`);
  if (v.trim() === '') throw new PromptListError(`line ${lineNo}: the ${what} is empty`);
  const max = what === 'prompt' ? MAX_PROMPT_CHARS : MAX_ANSWER_CHARS;
  if (v.length > max)
    throw new PromptListError(`line ${lineNo}: the ${what} has ${v.length} characters, more than ${max}`);
  if (PRINTABLE.test(v)) return v;
  for (const ch of v) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 32 || c > 126)
      throw new PromptListError(
        `line ${lineNo}: the ${what} has the character ${JSON.stringify(ch)}, which the lab's tokenizer does not have (printable ASCII only)`,
      );
  }
  return v;
}

/** Checks one row's teacher_id: absent (null, or an empty CSV cell) or one printable word of at most 64 characters. */
function checkTeacherId(v: unknown, lineNo: number): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string')
    throw new PromptListError(`line ${lineNo}: "${TEACHER_ID_COLUMN}" must be text (a teacher id), got ${typeof v}`);
  const id = v.trim();
  if (id === '') return null;
  if (id.length > MAX_TEACHER_ID_CHARS)
    throw new PromptListError(
      `line ${lineNo}: the ${TEACHER_ID_COLUMN} has ${id.length} characters, more than ${MAX_TEACHER_ID_CHARS}`,
    );
  const bad = [...id].find((ch) => {
    const c = ch.codePointAt(0) ?? 0;
    return c <= 32 || c > 126;
  });
  if (bad !== undefined)
    throw new PromptListError(
      `line ${lineNo}: the ${TEACHER_ID_COLUMN} ${show(id, MAX_TEACHER_ID_CHARS)} has the character ${JSON.stringify(bad)}; a teacher id is one word of printable ASCII`,
    );
  return id;
}

/**
 * The items of a prompt list: JSONL when its first non-blank line starts with `{`, CSV otherwise. Blank lines are
 * skipped. Throws PromptListError naming the line of the first problem.
 */
export function parsePromptList(text: string): PromptListItem[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0)
    throw new PromptListError(
      'the prompt list is empty: give JSONL lines {"prompt": ..., "answer": ...} or CSV with a header "prompt,answer"',
    );
  const items: PromptListItem[] = [];
  if (lines[first].trim().startsWith('{')) {
    lines.forEach((raw, i) => {
      const lineNo = i + 1;
      if (raw.trim() === '') return;
      let row: unknown;
      try {
        row = JSON.parse(raw);
      } catch (e) {
        throw new PromptListError(`line ${lineNo}: not valid JSON (${(e as Error).message})`);
      }
      if (!row || typeof row !== 'object' || Array.isArray(row))
        throw new PromptListError(`line ${lineNo}: must be an object {"prompt": ..., "answer": ...}`);
      const r = row as Record<string, unknown>;
      for (const k of ['prompt', 'answer']) if (!(k in r)) throw new PromptListError(`line ${lineNo}: missing "${k}"`);
      items.push({
        prompt: checkText('prompt', r.prompt, lineNo),
        answer: checkText('answer', r.answer, lineNo),
        teacherId: checkTeacherId(r[TEACHER_ID_COLUMN], lineNo),
        line: lineNo,
      });
    });
  } else {
    const header = csvFields(lines[first], first + 1).map((h) => h.trim().toLowerCase());
    const col = (name: string) => {
      const at = header.indexOf(name);
      if (at < 0)
        throw new PromptListError(
          `line ${first + 1}: the CSV header has no "${name}" column (it has ${header.map((h) => JSON.stringify(h)).join(', ')})`,
        );
      return at;
    };
    const p = col('prompt');
    const a = col('answer');
    const t = header.indexOf(TEACHER_ID_COLUMN);
    for (let i = first + 1; i < lines.length; i++) {
      if (lines[i].trim() === '') continue;
      const fields = csvFields(lines[i], i + 1);
      if (fields.length !== header.length)
        throw new PromptListError(
          `line ${i + 1}: ${fields.length} field${fields.length === 1 ? '' : 's'}, but the header has ${header.length}`,
        );
      items.push({
        prompt: checkText('prompt', fields[p], i + 1),
        answer: checkText('answer', fields[a], i + 1),
        teacherId: t < 0 ? null : checkTeacherId(fields[t], i + 1),
        line: i + 1,
      });
    }
  }
  if (!items.length) throw new PromptListError('the prompt list has a header but no prompts');
  const seen = new Map<string, PromptListItem>();
  for (const it of items) {
    const before = seen.get(it.prompt);
    if (before && before.answer !== it.answer)
      throw new PromptListError(
        `line ${it.line}: the prompt ${show(it.prompt)} is on line ${before.line} with another answer`,
      );
    if (before && before.teacherId !== it.teacherId)
      throw new PromptListError(
        `line ${it.line}: the prompt ${show(it.prompt)} is on line ${before.line} with another ${TEACHER_ID_COLUMN}`,
      );
    seen.set(it.prompt, it);
  }
  return [...seen.values()];
}

/** Whether a completion matches an answer: the same text (surrounding blanks ignored), or equal numbers. */
export function answerMatches(answer: string, completion: string): boolean {
  const a = answer.trim();
  const c = completion.trim();
  if (a === c) return true;
  return NUMBER.test(a) && NUMBER.test(c) && Number(a) === Number(c);
}

/**
 * The task of a prompt list (text as parsePromptList reads it). When the hash holds out none of the prompts, or
 * all of them, the list is too small to split and both splits draw from all of it (disjointSplits false).
 */
export function promptListTask(text: string): TaskFactory {
  const items = parsePromptList(text);
  const byPrompt = new Map(items.map((it) => [it.prompt, it]));
  const held = items.filter((it) => splitOfKey(PROMPT_LIST_TASK, it.prompt) === 'heldout').length;
  const disjoint = held > 0 && held < items.length;
  // A loop, not Math.max(...list): a spread of a long list overflows the call stack.
  let longestPrompt = 0;
  let longestAnswer = 0;
  for (const it of items) {
    longestPrompt = Math.max(longestPrompt, it.prompt.length);
    longestAnswer = Math.max(longestAnswer, it.answer.length);
  }
  const limit = 2 * longestAnswer + 2;
  const check = (it: PromptListItem, completion: string): Check => {
    const numeric = NUMBER.test(it.answer.trim());
    const formatOk = numeric ? NUMBER.test(completion.trim()) : completion.trim() !== '';
    if (!formatOk)
      return { accuracy: 0, format: 0, reason: numeric ? `not a number: ${show(completion)}` : 'blank completion' };
    if (answerMatches(it.answer, completion)) return { accuracy: 1, format: 1, reason: 'correct' };
    return { accuracy: 0, format: 1, reason: `wrong: expected ${show(it.answer)}, got ${show(completion)}` };
  };
  return defineTask<PromptListItem>({
    name: PROMPT_LIST_TASK,
    description: `Your own ${items.length} prompts (line ${items[0].line}: ${show(items[0].prompt, 30)} -> ${show(items[0].answer, 12)}), matched exactly or as numbers${disjoint ? `; ${held} held out` : '; too few to hold any out'}.`,
    difficulty: { min: 1, max: 1, default: 1, meaning: 'none (a fixed list)' },
    // Printable ASCII: a wrong answer may use any character the prompts and answers do not.
    alphabet: Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join(''),
    weights: { accuracy: 0.9, format: 0.1 },
    extraRewards: [],
    disjointSplits: disjoint,
    maxPromptLength: () => longestPrompt,
    maxCompletionLength: () => limit,
    draw: (rng) => items[rng.int(items.length)],
    render: (it) => it.prompt,
    parse: (prompt) => byPrompt.get(prompt) ?? null,
    key: (it) => it.prompt,
    solve: (it) => it.answer,
    completionLimit: () => limit,
    check: (it, completion) => check(it, completion),
    teacherId: (it) => it.teacherId,
  });
}
