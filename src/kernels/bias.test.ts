// GPU-vs-twin tier for the bias family (Qwen2's q/k/v biases): each case runs shaders/bias.wgsl through Dawn
// (SwiftShader on machines without a GPU) and compares it with src/reference/bias.ts.

import { describe } from 'vitest';
import { biasCases } from './bias.cases';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';

const gpu = useNodeDevice();

describe('bias kernels on the GPU match their CPU twins', () => {
  itEachCaseMatchesTwin(gpu, biasCases());
});
