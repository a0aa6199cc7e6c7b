// The browser sandbox of a user-written reward function (src/rl/user-reward.ts): a dedicated Worker made from a
// Blob, started by the PAGE at the engine worker's request (src/worker/sandbox-host.ts), so it runs under the page's
// Content-Security-Policy (no `import()` or `Function` from elsewhere, no connections off the site), and whose scope
// loses fetch, XMLHttpRequest, WebSocket, importScripts, indexedDB, caches, BroadcastChannel and the rest of
// BLOCKED_GLOBALS before the user's code runs. Called once per batch; a batch past the time limit terminates the
// Worker. Node's twin is src/cli/reward-sandbox.ts.

import {
  USER_REWARD_TIME_LIMIT_MS,
  UserRewardError,
  browserSandboxScript,
  compileError,
  scoresOfReply,
  timeLimitError,
  type UserRewardFunction,
  type UserRewardSandbox,
} from '../rl/user-reward';
import type { HostedWorker } from './sandbox-host';

/** A reward function running in a Blob worker the page hosts; see the file's head. */
export function browserRewardSandbox(startWorker: (script: string) => HostedWorker): UserRewardSandbox {
  return (source, options = {}): UserRewardFunction => {
    const limitMs = options.timeLimitMs ?? USER_REWARD_TIME_LIMIT_MS;
    const script = browserSandboxScript(source);
    let worker: HostedWorker | null = null;
    const stop = () => {
      worker?.terminate();
      worker = null;
    };
    return {
      score(batch) {
        if (!worker) worker = startWorker(script.text);
        const w = worker;
        return new Promise((resolve, reject) => {
          const done = () => {
            clearTimeout(timer);
            w.onmessage = null;
            w.onerror = null;
          };
          const timer = setTimeout(() => {
            done();
            stop();
            reject(timeLimitError(batch.length, limitMs));
          }, limitMs);
          w.onmessage = (data) => {
            done();
            try {
              resolve(scoresOfReply(data, batch));
            } catch (err) {
              reject(err);
            }
          };
          // A script that does not parse (or throws while it defines the function) reports here, with its line.
          w.onerror = (message, lineno) => {
            done();
            stop();
            const text = (message || 'the sandbox failed').replace(/^Uncaught /, '');
            reject(
              lineno ? compileError(text, lineno - script.firstLine + 1) : new UserRewardError(`reward_fn: ${text}`),
            );
          };
          w.postMessage(JSON.stringify(batch));
        });
      },
      destroy: stop,
    };
  };
}
