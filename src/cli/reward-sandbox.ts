// The Node sandbox of a user-written reward function (src/rl/user-reward.ts): a worker_threads thread that runs
// the function with vm in a fresh context (ECMAScript builtins only: no require, process, fetch, timers, and no
// eval or Function), called once per batch, and terminated when a batch runs past the time limit. The CLI's
// --reward_fn and the tests use it; the browser has its own in src/worker/reward-sandbox.ts.

import { Worker } from 'node:worker_threads';
import {
  USER_REWARD_FILE,
  USER_REWARD_TIME_LIMIT_MS,
  UserRewardError,
  compileError,
  nodeSandboxProgram,
  scoresOfReply,
  timeLimitError,
  type UserRewardFunction,
  type UserRewardSandbox,
} from '../rl/user-reward';

/**
 * The thread's code (CommonJS, run with eval). The context's global object has a null prototype and code
 * generation from strings is off, so neither `this.constructor.constructor` nor eval reaches the thread's own
 * globals; batches and replies cross as JSON text, so no object of the thread reaches the user's code either.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const vm = require('node:vm');
let run = null;
let failure = null;
try {
  const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false } });
  run = new vm.Script(workerData.program, { filename: workerData.file }).runInContext(context);
} catch (e) {
  const at = new RegExp(workerData.file.replace(/[.]/g, '[.]') + ':(\\\\d+)').exec(String((e && e.stack) || ''));
  failure = { message: (e && e.name ? e.name + ': ' : '') + String(e && e.message), line: at ? Number(at[1]) - workerData.firstLine + 1 : null };
}
parentPort.on('message', (batchJson) => parentPort.postMessage(failure ? { failure } : { reply: run(batchJson) }));
`;

type ThreadMessage = { failure: { message: string; line: number | null } } | { reply: string };

/** A reward function running in its own worker thread; see the file's head. */
export const nodeRewardSandbox: UserRewardSandbox = (source, options = {}): UserRewardFunction => {
  const limitMs = options.timeLimitMs ?? USER_REWARD_TIME_LIMIT_MS;
  const program = nodeSandboxProgram(source);
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
          workerData: { program: program.text, firstLine: program.firstLine, file: USER_REWARD_FILE },
          env: {},
          resourceLimits: { maxOldGenerationSizeMb: 512 },
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
        const onMessage = (m: ThreadMessage) => {
          done();
          if ('failure' in m) reject(compileError(m.failure.message, m.failure.line));
          else {
            try {
              resolve(scoresOfReply(m.reply, batch));
            } catch (e) {
              reject(e);
            }
          }
        };
        const onError = (e: Error) => {
          done();
          stop();
          reject(new UserRewardError(`reward_fn: its sandbox failed: ${e.message}`));
        };
        w.on('message', onMessage);
        w.on('error', onError);
        w.postMessage(JSON.stringify(batch));
      });
    },
    destroy: stop,
  };
};
