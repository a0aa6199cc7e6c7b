// Block row-layout (region row-layout): how the row kernels (softmax, cross-entropy, logprob, sampler, kl)
// spread rows over threads. A fragment, not a shader: shaders hold it in a region of its name.
// A workgroup takes ROWS rows and gives each LANES threads (src/kernels/rows.ts, rowLayout, picked from the row
// length only); lane i takes columns i, i + LANES, ... of its row; the row's lanes are merged in lane order
// through a small workgroup buffer of MERGE entries (the includer's, or block row-lanes's f32 one): two slots
// that alternate (merge_slot), so a slot is rewritten only after the next merge's barrier, one barrier per
// merge. LANES = 1 (short rows, e.g. a 99-token vocabulary: a thread per row) has no barrier at all:
// SwiftShader runs barriers very slowly.

override LANES: u32 = 1u;        // threads per row: 1, 4, 16 or 64
override ROWS: u32 = 64u;        // rows per workgroup
override WG: u32 = LANES * ROWS; // derived: do not pass
override MERGE: u32 = 2u * WG;   // derived: the two merge slots

const NEG_BIG: f32 = -3.402823e38;

var<private> merge_slot: u32; // the slot of the next merge: 0 or 1

// This thread's row (may be past the last row: such threads read nothing but join the merges).
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * ROWS + lid / LANES;
}
