// The split-K few-rows product equals its CPU twin and matmul()'s product within rounding: matmul-split-k.cases.ts.

import { describe } from 'vitest';
import { matmulSplitKCases } from './matmul-split-k.cases';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';

const gpu = useNodeDevice();

describe('matmul_split_k equals its CPU twin and matmul() within rounding', () => {
  itEachCaseMatchesTwin(gpu, matmulSplitKCases(), { logResults: true });
});
