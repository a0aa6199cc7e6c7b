// The references to the project's docs that the page's words carry ("docs/algorithms.md#importance-ratio" in a
// lesson's source or a field's help): where they are in a text, the page each links to, and that page itself. The
// build renders every docs/*.md as docs/<name>.html beside the page (scripts/docs-plugin.ts), a plain rendering
// whose headings carry the anchors GitHub gives them, so a reference is a link that opens the right section.
// Pure string work, no DOM.

/** A docs reference: docs/<name>.md with an optional #anchor. */
const DOC_REF = /docs\/([a-z0-9-]+)\.md(#[a-z0-9_-]+)?/g;

/** A piece of a text: plain words, or a docs reference with the page it links to. */
export type DocTextPart = { text: string } | { text: string; doc: string; anchor: string; href: string };

/** The page a reference links to, relative to the lab's page: docs/<name>.html#anchor. */
export function docHref(doc: string, anchor = ''): string {
  return `docs/${doc}.html${anchor}`;
}

/** A text cut into plain words and docs references, in order; joined, the parts' texts are the text. */
export function splitDocRefs(text: string): DocTextPart[] {
  const parts: DocTextPart[] = [];
  let at = 0;
  for (const m of text.matchAll(DOC_REF)) {
    if (m.index > at) parts.push({ text: text.slice(at, m.index) });
    const anchor = m[2] ?? '';
    parts.push({ text: m[0], doc: m[1], anchor, href: docHref(m[1], anchor) });
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push({ text: text.slice(at) });
  return parts;
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens (then -1, -2 for repeats). */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The headings of a markdown text (outside code fences), each with its level and unique anchor. */
export function docHeadings(markdown: string): { level: number; text: string; slug: string }[] {
  const seen = new Map<string, number>();
  const out: { level: number; text: string; slug: string }[] = [];
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence;
    const m = !fence && /^(#{1,6})\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = headingSlug(m[2]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.push({ level: m[1].length, text: m[2], slug: n ? `${base}-${n}` : base });
  }
  return out;
}

/**
 * A doc as a page: its headings as HTML headings with their anchors, everything between them as the markdown's own
 * text (escaped, wrapped), and references to other docs as links to their pages. No markdown library: the source
 * text reads well as it is, and the anchors are what a link needs.
 */
export function renderDocPage(name: string, markdown: string): string {
  const headings = docHeadings(markdown);
  let h = 0;
  let fence = false;
  const body: string[] = [];
  let block: string[] = [];
  const linked = (s: string) =>
    splitDocRefs(s)
      .map((p) =>
        'href' in p ? `<a href="${p.href.replace(/^docs\//, '')}">${escapeHtml(p.text)}</a>` : escapeHtml(p.text),
      )
      .join('');
  const flush = () => {
    if (block.join('').trim()) body.push(`<pre>${linked(block.join('\n'))}</pre>`);
    block = [];
  };
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence;
    const m = !fence && /^(#{1,6})\s+(.*)$/.exec(line);
    if (!m) {
      block.push(line);
      continue;
    }
    flush();
    const { level, slug } = headings[h++];
    body.push(`<h${level} id="${slug}">${escapeHtml(m[2])}</h${level}>`);
  }
  flush();
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(name)}.md · RL Lab</title>`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<style>body{font:15px/1.5 system-ui,sans-serif;max-width:900px;margin:2em auto;padding:0 1em}',
    'pre{white-space:pre-wrap;overflow-wrap:anywhere;font:13px/1.5 ui-monospace,monospace}</style>',
    '</head><body>',
    `<p><a href="../">RL Lab</a> · docs/${escapeHtml(name)}.md</p>`,
    ...body,
    '</body></html>',
  ].join('\n');
}
