// The browser sandbox of a user-written reward function (src/rl/user-reward.ts): a dedicated Worker made from a
// Blob inside the engine worker, whose scope loses fetch, XMLHttpRequest, WebSocket, importScripts, indexedDB,
// caches, BroadcastChannel and the rest of BLOCKED_GLOBALS before the user's code runs. Called once per batch; a
// batch past the time limit terminates the Worker. Node's twin is src/cli/reward-sandbox.ts.

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

/** A reward function running in its own Blob worker; see the file's head. */
export const browserRewardSandbox: UserRewardSandbox = (source, options = {}): UserRewardFunction => {
  const limitMs = options.timeLimitMs ?? USER_REWARD_TIME_LIMIT_MS;
  const script = browserSandboxScript(source);
  let worker: Worker | null = null;
  let url: string | null = null;
  const stop = () => {
    worker?.terminate();
    worker = null;
    if (url) URL.revokeObjectURL(url);
    url = null;
  };
  return {
    score(batch) {
      if (!worker) {
        url = URL.createObjectURL(new Blob([script.text], { type: 'text/javascript' }));
        worker = new Worker(url);
      }
      const w = worker;
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          w.removeEventListener('message', onMessage);
          w.removeEventListener('error', onError);
        };
        const timer = setTimeout(() => {
          done();
          stop();
          reject(timeLimitError(batch.length, limitMs));
        }, limitMs);
        const onMessage = (e: MessageEvent) => {
          done();
          try {
            resolve(scoresOfReply(String(e.data), batch));
          } catch (err) {
            reject(err);
          }
        };
        // A script that does not parse (or throws while it defines the function) reports here, with its line.
        const onError = (e: ErrorEvent) => {
          e.preventDefault();
          done();
          stop();
          const message = (e.message || 'the sandbox failed').replace(/^Uncaught /, '');
          reject(e.lineno ? compileError(message, e.lineno - script.firstLine + 1) : new UserRewardError(`reward_fn: ${message}`));
        };
        w.addEventListener('message', onMessage);
        w.addEventListener('error', onError);
        w.postMessage(JSON.stringify(batch));
      });
    },
    destroy: stop,
  };
};
