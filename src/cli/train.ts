// `npm run train`: reinforcement learning (train-rl.ts: --task <task> --preset <algorithm>), or with --sft the
// supervised warm start on a task's demonstrations (train-sft.ts).

import { runCli } from './args';
import { trainRl } from './train-rl';
import { trainSftCommand } from './train-sft';

runCli('train', (argv) =>
  argv.some((a) => a === '--sft' || a.startsWith('--sft=')) ? trainSftCommand(argv) : trainRl(argv),
);
