// The GPU runtime's public surface (browser-safe; Node's Dawn entry is ./node.ts, imported separately).
export { acquireDevice, describeAdapter, type AdapterReport, type AcquireOptions } from './adapter';
export { GpuContext, type TensorOptions } from './context';
export { arenaSize, spanOf, tensorArena, type TensorArena } from './arena';
export {
  GpuCounts,
  boundBytes,
  countsSince,
  type CountsSnapshot,
  type DispatchCost,
  type PhaseCounts,
} from './counters';
export { GpuProfiler, type KernelProfile, type PhaseProfile } from './profiler';
export { GpuDeviceLostError, GpuValidationError, WebGpuUnavailableError } from './errors';
export {
  COMPILE_BUDGET_MS,
  KernelFamily,
  compileReport,
  slowestCompiles,
  type CompileRecord,
  type OverrideConstants,
} from './kernel';
export {
  Params,
  UniformStruct,
  uniformLayout,
  uniforms,
  type UniformFields,
  type UniformType,
  type UniformValues,
} from './params';
export { declareShader, type ShaderDeclaration } from './shader-decl';
export { Recorder, grid, type Dispatch, type RecorderOptions } from './recorder';
export { Tensor, dtypeBytes, isHalfStorage, shapeSize, type DType, type HalfStorage, type HostArrayOf } from './tensor';
export type { KernelTiming } from './timer';
