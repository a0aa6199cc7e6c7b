// The browser sandbox of a user-written reward function (src/rl/rewards/user-reward.ts): a dedicated Worker made from a
// Blob, started by the PAGE at the engine worker's request (src/worker/sandbox-host.ts), so it runs under the page's
// Content-Security-Policy (no eval or Function, no `import()` from elsewhere, no connections off the site). Its
// script is the runner alone; the person's script is a second Blob the runner loads once it has locked its scope
// down to ECMAScript's builtins (no storage, network, messaging or workers) with counted ArrayBuffers. The host's
// side (hostedRewardFunction) sends each batch with a fresh nonce and reads only the reply that carries it; the
// person's code can neither read the nonce nor post a message. A batch past the time limit terminates the Worker.
// A function that does not compile is placed by a second, syntax-only worker (syntaxCheckScript: a `throw` before
// the person's text, so none of it runs), since Chromium's importScripts error carries no line.
// Node's twin is src/cli/reward-sandbox.ts.

import {
  FUNCTION_FIRST_LINE,
  UserRewardError,
  browserRunnerScript,
  compileError,
  functionScript,
  hostedRewardFunction,
  sourcePosition,
  syntaxCheckScript,
  type UserRewardSandbox,
} from '../rl/rewards/user-reward';
import type { StartSandbox } from './sandbox-host';

/** How long the syntax-only worker may take to answer before the error is shown without its place. */
const LOCATE_LIMIT_MS = 5_000;

/** The message of a compile error without its place, as compileError writes it. */
const COMPILE_PREFIX = 'reward_fn does not compile: ';

/** The parser's own error and place for `source`, from a syntax-only worker; null when it parses or gives no place. */
function locateSyntaxError(
  startWorker: StartSandbox,
  source: string,
): Promise<{ message: string; line: number; column: number } | null> {
  return new Promise((resolve) => {
    const channel = startWorker({ runner: syntaxCheckScript(source), fn: '' });
    const finish = (r: { message: string; line: number; column: number } | null) => {
      clearTimeout(timer);
      channel.onerror = null;
      channel.onmessage = null;
      channel.terminate();
      resolve(r);
    };
    const timer = setTimeout(() => finish(null), LOCATE_LIMIT_MS);
    channel.onmessage = () => finish(null);
    channel.onerror = (message, at) => {
      const text = message.replace(/^Uncaught /, '');
      // "0": the script parsed and stopped at its throw; no place to give.
      finish(at && text !== '0' ? { message: text, ...at } : null);
    };
  });
}

/** A reward function running in a Blob worker the page hosts; see the file's head. */
export function browserRewardSandbox(startWorker: StartSandbox): UserRewardSandbox {
  return (source, options = {}) => {
    const scripts = { runner: browserRunnerScript(options), fn: functionScript(source) };
    const fn = hostedRewardFunction(() => startWorker(scripts), options, source);
    return {
      async score(batch) {
        try {
          return await fn.score(batch);
        } catch (e) {
          if (!(e instanceof UserRewardError) || e.at || !e.message.startsWith(COMPILE_PREFIX)) throw e;
          const found = await locateSyntaxError(startWorker, source);
          if (!found) throw e;
          const place = sourcePosition(source, found.line - FUNCTION_FIRST_LINE + 1, found.column);
          throw place ? compileError(found.message, place) : e;
        }
      },
      destroy: () => fn.destroy(),
    };
  };
}
