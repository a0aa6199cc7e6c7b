// The Vite plugin that puts the project's docs beside the built page: every docs/*.md as docs/<name>.html
// (src/schema/doc-links.ts renders it, with GitHub's heading anchors), so the docs references in the page's words
// (a lesson's source, a field's help) are links that open the section they name. Build-time only.
import { readFileSync, readdirSync } from 'node:fs';
import type { Plugin } from 'vite';
import { renderDocPage } from '../src/schema/doc-links';

export function docsPlugin(): Plugin {
  return {
    name: 'rl-lab-docs',
    apply: 'build',
    generateBundle() {
      const dir = new URL('../docs/', import.meta.url);
      for (const file of readdirSync(dir)
        .filter((f) => f.endsWith('.md'))
        .sort()) {
        const name = file.replace(/\.md$/, '');
        this.emitFile({
          type: 'asset',
          fileName: `docs/${name}.html`,
          source: renderDocPage(name, readFileSync(new URL(file, dir), 'utf8')),
        });
      }
    },
  };
}
