// Loads a run's `teacher` and `teachers` (on-policy distillation, one teacher or several by id) through the same path as the policy's warm start: a shipped
// name (checkpoints/<name>/), a folder or URL (a lab run's saved checkpoint, a Hugging Face folder), or a hub id the
// driver has put in its assets (the CLI's hub cache, the page's kept models). Refuses, with the reason named, a
// teacher whose tokenizer is not the student's: the teacher scores the student's token ids, so the two must mean
// the same text by every id. Not the scoring (src/rl/learners/teacher.ts).

import { loadHfFolder } from '../io/hf-folder';
import type { Tokenizer } from '../io/tokenizer';
import type { RLConfig } from '../schema/config';
import { checkpointDir } from '../schema/checkpoint-path';
import type { ModelConfig } from '../schema/model-config';
import type { TeacherWeights } from '../rl/learners/teacher';
import { CHAR_TOKENIZER_PATH, type AssetLoader } from './start-policy';
import { assertPromptsFit } from '../rl/algorithm/trainer';

/**
 * Why `teacher` cannot score `student`'s tokens, or null when it can: the same token ids with the same strings,
 * the same special ids, the same BOS rule, and a model vocabulary (embedding rows) of the same size.
 */
export function teacherTokenizerMismatch(
  student: { tokenizer: Tokenizer; model: ModelConfig },
  teacher: { tokenizer: Tokenizer; model: ModelConfig },
): string | null {
  const s = student.tokenizer;
  const t = teacher.tokenizer;
  if (teacher.model.vocabSize !== student.model.vocabSize)
    return `its model has ${teacher.model.vocabSize} vocabulary rows and the student's ${student.model.vocabSize}`;
  if (t.vocabSize !== s.vocabSize) return `its tokenizer has ${t.vocabSize} tokens and the student's ${s.vocabSize}`;
  for (const [name, a, b] of [
    ['bos', t.bosId, s.bosId],
    ['eos', t.eosId, s.eosId],
    ['pad', t.padId, s.padId],
  ] as const)
    if (a !== b) return `its ${name} id is ${a} and the student's ${b}`;
  if (t.prependsBos !== s.prependsBos)
    return `its tokenizer ${t.prependsBos ? 'starts' : 'does not start'} a prompt with BOS and the student's ${s.prependsBos ? 'does' : 'does not'}`;
  for (let id = 0; id < s.vocabSize; id++) {
    const a = t.tokenString(id);
    const b = s.tokenString(id);
    if (a !== b)
      return `token ${id} is ${JSON.stringify(a)} in its tokenizer and ${JSON.stringify(b)} in the student's`;
  }
  return null;
}

/** Reads the config's teacher and checks it against the student; fails with a message naming the folder. */
export async function loadTeacher(
  config: RLConfig,
  assets: AssetLoader,
  student: { tokenizer: Tokenizer; model: ModelConfig },
): Promise<TeacherWeights> {
  if (config.teacher === null) throw new Error('teacher: not set');
  return loadTeacherCheckpoint(config, config.teacher, `teacher "${config.teacher}"`, assets, student);
}

/**
 * Reads every teacher of `teachers` (multi-teacher distillation), each checked against the student as the teacher
 * is; a failure names the teacher's id and folder. A folder named twice (or the default teacher's, given as
 * `loaded`) is read once: its ids share one TeacherWeights, which the trainer loads once.
 */
export async function loadTeachers(
  config: RLConfig,
  assets: AssetLoader,
  student: { tokenizer: Tokenizer; model: ModelConfig },
  loaded?: TeacherWeights,
): Promise<Record<string, TeacherWeights>> {
  const byDir = new Map<string, TeacherWeights>();
  if (loaded && config.teacher !== null) byDir.set(checkpointDir(config.teacher), loaded);
  const out: Record<string, TeacherWeights> = {};
  for (const [id, checkpoint] of Object.entries(config.teachers ?? {})) {
    const dir = checkpointDir(checkpoint);
    let weights = byDir.get(dir);
    if (!weights) {
      weights = await loadTeacherCheckpoint(config, checkpoint, `teachers ${id} "${checkpoint}"`, assets, student);
      weights.source = `teacher ${id} ${dir}`;
      byDir.set(dir, weights);
    }
    out[id] = weights;
  }
  return out;
}

/** One teacher checkpoint read and checked against the student; `label` starts every message about it. */
async function loadTeacherCheckpoint(
  config: RLConfig,
  checkpoint: string,
  label: string,
  assets: AssetLoader,
  student: { tokenizer: Tokenizer; model: ModelConfig },
): Promise<TeacherWeights> {
  const dir = checkpointDir(checkpoint);
  const read = {
    bytes: (name: string) => assets.bytes(`${dir}${name}`),
    text: (name: string) => assets.text(`${dir}${name}`),
  };
  let folder: Awaited<ReturnType<typeof loadHfFolder>>;
  try {
    folder = await loadHfFolder(read, () => assets.text(CHAR_TOKENIZER_PATH));
  } catch (e) {
    throw new Error(`${label} (${dir}): ${(e as Error).message}`);
  }
  const mismatch = teacherTokenizerMismatch(student, { tokenizer: folder.tokenizer, model: folder.ck.config });
  if (mismatch)
    throw new Error(
      `${label} (${dir}): its tokenizer is not the student's (${mismatch}); a teacher scores the student's token ids, so it needs the same tokenizer`,
    );
  try {
    assertPromptsFit(config, student.tokenizer, folder.ck.config.contextLength);
  } catch (e) {
    throw new Error(`${label} (${dir}): in the teacher's context, ${(e as Error).message}`);
  }
  return { config: folder.ck.config, params: folder.ck.params, source: `teacher ${dir}` };
}
