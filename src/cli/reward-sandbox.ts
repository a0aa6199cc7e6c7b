// The Node sandbox of a user-written reward function (src/rl/user-reward.ts): a worker_threads thread with a heap
// limit that runs the function with vm in a fresh context (ECMAScript builtins only: no require, process, fetch,
// timers, WebAssembly or SharedArrayBuffer, no eval or Function, ArrayBuffers and typed arrays counted against
// USER_REWARD_BUFFER_LIMIT_BYTES), called once per batch, and terminated when a batch runs past the time limit,
// the thread runs out of heap, or the function holds too much buffer memory. The runner program is compiled and
// run in the context first; the person's script is a vm.Script of its own, parsed after. The CLI's --reward_fn and
// the tests use it; the browser has its own in src/worker/reward-sandbox.ts.

import { Worker } from 'node:worker_threads';
import {
  USER_REWARD_FILE,
  USER_REWARD_HEAP_LIMIT_MB,
  USER_REWARD_TIME_LIMIT_MS,
  UserRewardError,
  functionScript,
  nodeRunnerProgram,
  readReply,
  timeLimitError,
  type UserRewardFunction,
  type UserRewardSandbox,
} from '../rl/user-reward';

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
parentPort.on('message', (batchJson) => {
  const reply = runner.run(JSON.parse(batchJson));
  parentPort.postMessage(typeof reply === 'string' ? reply : '');
});
`;

/** A reward function running in its own worker thread; see the file's head. */
export const nodeRewardSandbox: UserRewardSandbox = (source, options = {}): UserRewardFunction => {
  const limitMs = options.timeLimitMs ?? USER_REWARD_TIME_LIMIT_MS;
  const heapMb = options.heapLimitMb ?? USER_REWARD_HEAP_LIMIT_MB;
  const runner = nodeRunnerProgram();
  const fn = functionScript(source);
  let worker: Worker | null = null;
  const stop = () => {
    void worker?.terminate();
    worker = null;
  };
  return {
    score(batch) {
      if (!worker) {
        worker = new Worker(THREAD, {
          eval: true,
          workerData: { runner, fn, file: USER_REWARD_FILE },
          env: {},
          resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(16, heapMb / 4) },
        });
        // The thread must not keep the process alive after the run (the CLI ends by returning from main).
        worker.unref();
      }
      const w = worker;
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          w.off('message', onMessage);
          w.off('error', onError);
        };
        const timer = setTimeout(() => {
          done();
          stop();
          reject(timeLimitError(batch.length, limitMs));
        }, limitMs);
        const onMessage = (reply: string) => {
          done();
          const r = readReply(reply, batch);
          if ('scores' in r) return resolve(r.scores);
          if (r.stop) stop();
          reject(r.error);
        };
        const onError = (e: Error & { code?: string }) => {
          done();
          stop();
          reject(
            new UserRewardError(
              e.code === 'ERR_WORKER_OUT_OF_MEMORY'
                ? `reward_fn ran out of memory (its sandbox may use ${heapMb} MB of heap), so its sandbox was stopped`
                : `reward_fn: its sandbox failed: ${e.message}`,
            ),
          );
        };
        w.on('message', onMessage);
        w.on('error', onError);
        w.postMessage(JSON.stringify(batch));
      });
    },
    destroy: stop,
  };
};
