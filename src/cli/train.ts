// `npm run train`: reinforcement learning (train-rl.ts: --task <task> --preset <algorithm>), or with --sft the
// supervised warm start on a task's demonstrations (train-sft.ts).

import { runCli } from './args';
import { trainRl } from './train-rl';
import { isSftCommand, trainSftCommand } from './train-sft';

runCli('train', (argv) => (isSftCommand(argv) ? trainSftCommand(argv) : trainRl(argv)));
