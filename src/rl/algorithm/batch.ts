// The training view of a batch of rollouts: every sequence laid out as its left-padded prompt followed by its
// completion, with the index arrays that move per-token quantities between the model's (N, T) positions and the
// objective's (N, S) completion tokens. Pure TypeScript (no GPU): both learners (GPU and CPU) read it.
//
// Layout, for N rows, prompts left-padded to P tokens (BOS first) and completions of up to S tokens:
//   inputs  (N, T), T = P + S - 1: [pad.. BOS prompt | completion tokens 0..S-2]  (the last token is never an input)
//   the logits at position t predict the token at t + 1, so completion token s is scored at position P - 1 + s.
//   gatherIdx  (N*S): flat position n*T + P - 1 + s of completion token (n, s)            (N*T) -> (N*S)
//   scatterIdx (N*T): the completion token a position predicts, or N*S (a zero slot) if none  (N*S) -> (N*T)

/** One minibatch (or a whole batch) of sequences in the layout above. */
export interface SequenceBatch {
  /** Rows (sequences). */
  N: number;
  /** Prompt positions (the longest prompt of the whole batch, BOS included), so every minibatch has the same shape. */
  P: number;
  /** Completion positions (max_completion_length). */
  S: number;
  /** Input positions per row: P + S - 1. */
  T: number;
  /** (N*T) input token ids (padId before each prompt). */
  tokens: Uint32Array;
  /** (N*T) RoPE positions: 0 at each row's first real token. */
  positions: Uint32Array;
  /** (N) first real position per row (left padding). */
  kvStart: Uint32Array;
  /** (N*T) the token each position predicts (padId where it predicts nothing that counts). */
  targets: Uint32Array;
  /** (N*S) see the header. */
  gatherIdx: Uint32Array;
  /** (N*T) see the header. */
  scatterIdx: Uint32Array;
  /** (N) each row's prompt (BOS first), unpadded. */
  prompts: number[][];
  /** (N*S) completion tokens (padId after a row's end). */
  completions: Uint32Array;
}

/**
 * The sequence batch of `rows` (indices into `prompts` / the (R, S) completions).
 * @param P the padded prompt length (at least the longest prompt of these rows).
 */
export function sequenceBatch(
  prompts: readonly (readonly number[])[],
  completions: Uint32Array,
  S: number,
  rows: readonly number[],
  P: number,
  padId: number,
): SequenceBatch {
  const N = rows.length;
  const T = P + S - 1;
  const tokens = new Uint32Array(N * T).fill(padId);
  const positions = new Uint32Array(N * T);
  const kvStart = new Uint32Array(N);
  const targets = new Uint32Array(N * T).fill(padId);
  const gatherIdx = new Uint32Array(N * S);
  const scatterIdx = new Uint32Array(N * T).fill(N * S);
  const comp = new Uint32Array(N * S);
  const rowPrompts: number[][] = [];
  rows.forEach((r, n) => {
    const prompt = prompts[r];
    if (prompt.length > P) throw new Error(`sequenceBatch: prompt of ${prompt.length} tokens does not fit P = ${P}`);
    rowPrompts.push([...prompt]);
    const start = P - prompt.length;
    kvStart[n] = start;
    const o = n * T;
    for (let t = 0; t < prompt.length; t++) tokens[o + start + t] = prompt[t];
    for (let s = 0; s < S; s++) {
      const tok = completions[r * S + s];
      comp[n * S + s] = tok;
      if (s < S - 1) tokens[o + P + s] = tok;
      const at = P - 1 + s;
      targets[o + at] = tok;
      gatherIdx[n * S + s] = o + at;
      scatterIdx[o + at] = n * S + s;
    }
    for (let t = 0; t < T; t++) positions[o + t] = Math.max(0, t - start);
  });
  return {
    N,
    P,
    S,
    T,
    tokens,
    positions,
    kvStart,
    targets,
    gatherIdx,
    scatterIdx,
    prompts: rowPrompts,
    completions: comp,
  };
}

/** The (rows.length * S) slice of an (R, S) per-token array at `rows`. */
export function takeRows<A extends Float32Array | Uint32Array>(x: A, S: number, rows: readonly number[]): A {
  const out = new (x.constructor as new (n: number) => A)(rows.length * S);
  rows.forEach((r, n) => out.set(x.subarray(r * S, (r + 1) * S), n * S));
  return out;
}

/** Writes an (rows.length * S) slice back into an (R, S) array at `rows`. */
export function putRows(dst: Float32Array, src: Float32Array, S: number, rows: readonly number[]): void {
  rows.forEach((r, n) => dst.set(src.subarray(n * S, (n + 1) * S), r * S));
}
