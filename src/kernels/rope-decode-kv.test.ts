// rope_decode_kv (one dispatch for a cached forward's RoPE and KV-cache writes) against the kernels it replaces,
// bit for bit, and against its CPU twin: src/kernels/rope-decode-kv.cases.ts.

import { describe } from 'vitest';
import { ropeDecodeKvCases } from './rope-decode-kv.cases';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';

const gpu = useNodeDevice();

describe('rope_decode_kv equals rope, rope and two KV writes, and its CPU twin', () => {
  itEachCaseMatchesTwin(gpu, ropeDecodeKvCases(), { logResults: true });
});
