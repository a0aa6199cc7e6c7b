// A text of the page whose docs references ("docs/algorithms.md#importance-ratio") are links to the docs pages the
// build puts beside the page (src/schema/doc-links.ts); the rest of the text as it is.
import { splitDocRefs } from '../store/schema';

export function DocText({ text }: { text: string }) {
  return (
    <>
      {splitDocRefs(text).map((p, i) =>
        'href' in p ? (
          <a key={i} href={p.href} target="_blank" rel="noopener" data-testid="doc-link">
            {p.text}
          </a>
        ) : (
          p.text
        ),
      )}
    </>
  );
}
