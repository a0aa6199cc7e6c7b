// Node module hook for the benchmark's TensorFlow.js peer. tfjs-core's Node bundle leaves out the gradient
// registrations; they ship only as browser-style ES modules (dist/register_all_gradients.js) whose imports omit
// file extensions and name directories, which Node's resolver refuses. This retries such relative imports, inside
// @tensorflow packages only, with ".js" and "/index.js" (what bundlers do). Loaded with `tsx --import`.
import { register } from 'node:module';

register('./tfjs-loader.mjs', import.meta.url);
