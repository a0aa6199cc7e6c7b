// The Node sandbox of a user-written reward function (src/rl/rewards/user-reward.ts): a worker_threads thread with a heap
// limit that runs the function with vm in a fresh context (ECMAScript builtins only: no require, process, fetch,
// timers, WebAssembly or SharedArrayBuffer, no eval or Function, ArrayBuffers and typed arrays counted against
// USER_REWARD_BUFFER_LIMIT_BYTES), called once per batch, and terminated when a batch runs past the time limit,
// the thread runs out of heap, or the function holds too much buffer memory. The runner program is compiled and
// run in the context first; the person's script is a vm.Script of its own, parsed after. The CLI's --reward_fn and
// the tests use it; the browser has its own in src/worker/reward-sandbox.ts.

import { Worker } from 'node:worker_threads';
import {
  READY,
  USER_REWARD_FILE,
  USER_REWARD_HEAP_LIMIT_MB,
  functionScript,
  hostedRewardFunction,
  nodeRunnerProgram,
  type SandboxChannel,
  type UserRewardSandbox,
} from '../rl/rewards/user-reward';

/**
 * The thread's code (CommonJS, run with eval). The context's global object has a null prototype and code
 * generation from strings is off, so neither `this.constructor.constructor` nor eval reaches the thread's own
 * globals; batches and replies cross as JSON text, so no object of the thread reaches the user's code, and the
 * user's code never sees parentPort: the thread, not the context, posts every reply.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const vm = require('node:vm');
const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false } });
const runner = new vm.Script(workerData.runner, { filename: 'reward-runner.js' }).runInContext(context);
runner.lockdown();
let error;
try {
  new vm.Script(workerData.fn, { filename: workerData.file }).runInContext(context);
} catch (e) {
  error = e;
}
runner.loaded(error);
parentPort.postMessage(workerData.ready);
parentPort.on('message', (data) => {
  const m = JSON.parse(data);
  const reply = runner.run(m.batch);
  parentPort.postMessage(m.nonce + '\\n' + (typeof reply === 'string' ? reply : ''));
});
`;

/** A reward function running in its own worker thread; see the file's head. */
export const nodeRewardSandbox: UserRewardSandbox = (source, options = {}) => {
  const heapMb = options.heapLimitMb ?? USER_REWARD_HEAP_LIMIT_MB;
  const workerData = {
    runner: nodeRunnerProgram(options),
    fn: functionScript(source),
    file: USER_REWARD_FILE,
    ready: READY,
  };
  return hostedRewardFunction(
    (): SandboxChannel => {
      const worker = new Worker(THREAD, {
        eval: true,
        workerData,
        env: {},
        resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(16, heapMb / 4) },
      });
      // The thread must not keep the process alive after the run (the CLI ends by returning from main).
      worker.unref();
      const channel: SandboxChannel = {
        postMessage: (data) => worker.postMessage(data),
        terminate: () => void worker.terminate(),
        onmessage: null,
        onerror: null,
      };
      worker.on('message', (data: string) => channel.onmessage?.(data));
      worker.on('error', (e: Error & { code?: string }) =>
        channel.onerror?.(
          e.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? `reward_fn ran out of memory (its sandbox may use ${heapMb} MB of heap), so its sandbox was stopped`
            : e.message,
        ),
      );
      return channel;
    },
    options,
    source,
  );
};
