// The lessons as the Markdown table docs/lessons.md carries (id, title, runs and step budget), written from LESSONS so
// the docs cannot drift: src/lessons/lessons.test.ts compares the file's table with this one and prints it when they
// differ.

import { LESSONS } from './index';

/** The runs of a lesson and its budget, in words: "a vs b; 8 steps each". */
export function lessonRunsText(l: (typeof LESSONS)[number]): string {
  return `${l.runs.map((r) => r.label).join(' vs ')}; ${l.steps} steps${l.runs.length > 1 ? ' each' : ''}`;
}

/** The table under "## The lessons" in docs/lessons.md. */
export function lessonsTable(): string {
  const rows = LESSONS.map((l) => `| \`${l.id}\` | ${l.title} | ${lessonRunsText(l).replaceAll('|', '\\|')} |`);
  return ['| id | title | runs |', '|---|---|---|', ...rows].join('\n');
}
