// A folder read while the page is offline: the loader passes on the offline error of its weights file as it is,
// naming the file and why, and asks for no shard index (which could not come either).
import { describe, expect, it } from 'vitest';
import { loadHfFolder } from './hf-folder';
import { OfflineFileError } from './hf-layout';

describe('loadHfFolder offline', () => {
  it('fails with the offline error of model.safetensors, not a missing shard index', async () => {
    const asked: string[] = [];
    const offline = async (file: string): Promise<never> => {
      asked.push(file);
      throw new OfflineFileError(`/models/x/${file}`);
    };
    const error = await loadHfFolder({ text: offline, bytes: offline }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OfflineFileError);
    expect((error as Error).message).toMatch(/^\/models\/x\/model\.safetensors: the page is offline/);
    expect((error as Error).message).not.toContain('index');
    expect(asked).not.toContain('model.safetensors.index.json');
  });
});
