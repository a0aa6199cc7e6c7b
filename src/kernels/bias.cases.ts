// GPU-versus-twin cases of the bias family (shaders/bias.wgsl): the in-place bias add and the accumulated bias
// gradient at awkward shapes (a single element, ragged last workgroups, long columns, more columns than a workgroup).

import * as refBias from '../reference/bias';
import * as bias from './bias';
import { simpleCase, type KernelCase } from './verify';

// (rows, cols) of the matrix; the bias has cols elements. Leading dimensions of 3-D shapes count as rows.
const SHAPES: number[][] = [
  [1, 1],
  [3, 17],
  [2, 33, 300],
  [257, 5],
  [5, 1031],
  [1500, 3],
];

export function biasCases(): KernelCase[] {
  return SHAPES.flatMap((shape) => {
    const cols = shape[shape.length - 1];
    const rows = shape.slice(0, -1).reduce((a, b) => a * b, 1);
    const tag = shape.join('x');
    return [
      simpleCase({
        name: `biasAdd ${tag}`,
        family: 'bias',
        out: shape,
        inputs: [{ shape: [cols] }],
        randomOutput: true,
        gpu: bias.biasAdd,
        twin: refBias.biasAdd,
        tol: { atol: 0, rtol: 0 },
      }),
      simpleCase({
        name: `biasGrad accumulate ${tag}`,
        family: 'bias',
        out: [cols],
        inputs: [{ shape }],
        randomOutput: true,
        gpu: bias.biasGrad,
        twin: refBias.biasGrad,
        tol: { atol: 1e-6 * Math.sqrt(rows), rtol: 1e-5 },
      }),
    ];
  });
}
