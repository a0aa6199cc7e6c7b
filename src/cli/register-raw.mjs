// Node module hook so the CLI can import WGSL the way Vite does: `import src from './x.wgsl?raw'`
// resolves to a module whose default export is the file's text. Loaded with `tsx --import`.
import { register } from 'node:module';

register('./raw-loader.mjs', import.meta.url);
