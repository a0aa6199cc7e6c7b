// The browser sandbox of a user-written reward function (src/rl/user-reward.ts): a dedicated Worker made from a
// Blob, started by the PAGE at the engine worker's request (src/worker/sandbox-host.ts), so it runs under the page's
// Content-Security-Policy (no eval or Function, no `import()` from elsewhere, no connections off the site). Its
// script is the runner alone; the person's script is a second Blob the runner loads once it has locked its scope
// down to ECMAScript's builtins (no storage, network, messaging or workers) with counted ArrayBuffers. Each batch
// goes with a fresh random nonce, and only a reply that starts with it is read; the person's code can neither read
// the nonce nor post a message. Called once per batch; a batch past the time limit terminates the Worker. Node's
// twin is src/cli/reward-sandbox.ts.

import {
  USER_REWARD_TIME_LIMIT_MS,
  UserRewardError,
  browserRunnerScript,
  functionScript,
  readReply,
  timeLimitError,
  type UserRewardFunction,
  type UserRewardSandbox,
} from '../rl/user-reward';
import type { HostedWorker, StartSandbox } from './sandbox-host';

/** A fresh secret for one batch: 128 random bits as hex. */
function nonce(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A reward function running in a Blob worker the page hosts; see the file's head. */
export function browserRewardSandbox(startWorker: StartSandbox): UserRewardSandbox {
  return (source, options = {}): UserRewardFunction => {
    const limitMs = options.timeLimitMs ?? USER_REWARD_TIME_LIMIT_MS;
    const scripts = { runner: browserRunnerScript(), fn: functionScript(source) };
    let worker: HostedWorker | null = null;
    const stop = () => {
      worker?.terminate();
      worker = null;
    };
    return {
      score(batch) {
        if (!worker) worker = startWorker(scripts);
        const w = worker;
        const secret = nonce();
        return new Promise((resolve, reject) => {
          const done = () => {
            clearTimeout(timer);
            w.onmessage = null;
            w.onerror = null;
          };
          const fail = (error: UserRewardError) => {
            done();
            stop();
            reject(error);
          };
          const timer = setTimeout(() => fail(timeLimitError(batch.length, limitMs)), limitMs);
          w.onmessage = (data) => {
            if (!data.startsWith(`${secret}\n`))
              return fail(
                new UserRewardError(
                  'reward_fn: its sandbox answered with a message that is not the reply to this batch, so it was stopped',
                ),
              );
            done();
            const r = readReply(data.slice(secret.length + 1), batch);
            if ('scores' in r) return resolve(r.scores);
            if (r.stop) stop();
            reject(r.error);
          };
          // The runner catches the person's errors; what reaches here is the sandbox itself failing.
          w.onerror = (message) =>
            fail(new UserRewardError(`reward_fn: ${(message || 'its sandbox failed').replace(/^Uncaught /, '')}`));
          w.postMessage(JSON.stringify({ nonce: secret, batch }));
        });
      },
      destroy: stop,
    };
  };
}
