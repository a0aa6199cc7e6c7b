// The docs references the page shows are links that land: every docs/<name>.md#anchor in a lesson, a field's help
// or a config section's math names a doc the build renders (scripts/docs-plugin.ts) and a heading of it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { docHeadings, headingSlug, renderDocPage, splitDocRefs } from '../schema/doc-links';
import { LESSONS } from './index';
import { RL_FIELDS, SECTIONS } from './schema';

const docText = (name: string) => readFileSync(new URL(`../../docs/${name}.md`, import.meta.url), 'utf8');

describe('docs references', () => {
  it('cuts a text into words and links, and the parts join back into the text', () => {
    const text = 'the ratio (docs/algorithms.md#importance-ratio); every metric: docs/metrics.md.';
    const parts = splitDocRefs(text);
    expect(parts.map((p) => p.text).join('')).toBe(text);
    expect(parts.filter((p) => 'href' in p).map((p) => ('href' in p ? p.href : ''))).toEqual([
      'docs/algorithms.html#importance-ratio',
      'docs/metrics.html',
    ]);
    expect(splitDocRefs('no reference here')).toEqual([{ text: 'no reference here' }]);
  });

  it("gives headings GitHub's anchors, numbering repeats", () => {
    expect(headingSlug('Which log-probs the sampler records')).toBe('which-log-probs-the-sampler-records');
    expect(headingSlug('PPO value loss and critic')).toBe('ppo-value-loss-and-critic');
    expect(headingSlug('`beta` and the KL (k3)')).toBe('beta-and-the-kl-k3');
    expect(docHeadings('# A\n## B\n```\n# not a heading\n```\n## B').map((h) => h.slug)).toEqual(['a', 'b', 'b-1']);
  });

  it('renders a doc with its anchors and no markup of its own text', () => {
    const page = renderDocPage('x', '# Title\nsome <b>text</b> & docs/metrics.md#group-signal\n## Part two');
    expect(page).toContain('<h1 id="title">Title</h1>');
    expect(page).toContain('<h2 id="part-two">Part two</h2>');
    expect(page).toContain(
      'some &lt;b&gt;text&lt;/b&gt; &amp; <a href="metrics.html#group-signal">docs/metrics.md#group-signal</a>',
    );
  });

  it("every reference in the lessons, the fields' help and the sections lands on a doc and a heading of it", () => {
    const texts = [
      ...LESSONS.map((l) => JSON.stringify(l)),
      ...Object.values(RL_FIELDS).map((f) => f.doc),
      ...Object.values(SECTIONS).map((s) => s.math),
    ];
    const refs = texts.flatMap((t) => splitDocRefs(t).filter((p) => 'href' in p));
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      if (!('doc' in ref)) continue;
      const slugs = docHeadings(docText(ref.doc)).map((h) => h.slug);
      if (ref.anchor) expect(slugs, ref.text).toContain(ref.anchor.slice(1));
    }
  });
});
