// The browser sandbox of a user-written reward function (src/rl/user-reward.ts): a dedicated Worker made from a
// Blob, started by the PAGE at the engine worker's request (src/worker/sandbox-host.ts), so it runs under the page's
// Content-Security-Policy (no eval or Function, no `import()` from elsewhere, no connections off the site). Its
// script is the runner alone; the person's script is a second Blob the runner loads once it has locked its scope
// down to ECMAScript's builtins (no storage, network, messaging or workers) with counted ArrayBuffers. The host's
// side (hostedRewardFunction) sends each batch with a fresh nonce and reads only the reply that carries it; the
// person's code can neither read the nonce nor post a message. A batch past the time limit terminates the Worker.
// Node's twin is src/cli/reward-sandbox.ts.

import { browserRunnerScript, functionScript, hostedRewardFunction, type UserRewardSandbox } from '../rl/user-reward';
import type { StartSandbox } from './sandbox-host';

/** A reward function running in a Blob worker the page hosts; see the file's head. */
export function browserRewardSandbox(startWorker: StartSandbox): UserRewardSandbox {
  return (source, options = {}) => {
    const scripts = { runner: browserRunnerScript(options), fn: functionScript(source) };
    return hostedRewardFunction(() => startWorker(scripts), options, source);
  };
}
