// The command line of scripts/mock-hub.ts: the folders it serves as models, its ports, and a flag for each fault
// the hub tests inject into the mock hub (src/testing/mock-hub.ts MockFaults), so a person can reproduce a stall, an
// endless body, a gzip bomb, a 0-byte or wrong-size announcement, a wrong hash, a silent HEAD, a dropped
// connection, a slow server or a missing Range support by hand against the CLI or the page.

import type { MockFaults } from './mock-hub';

export interface MockHubArgs {
  /** Each model id and the folder it serves. */
  repos: { id: string; dir: string }[];
  ports: { hub?: number; cdn?: number };
  faults: MockFaults;
}

/** Each fault flag: its value's shape, what it does, and how it sets the fault. */
const FAULT_FLAGS: Record<string, { value: string; doc: string; set(f: MockFaults, parts: string[]): void }> = {
  '--stall': {
    value: 'FILE[:BYTES]',
    doc: 'every GET of FILE sends its headers and BYTES bytes (default 1000), then nothing, the connection left open',
    set: (f, [file, bytes]) => (f.stall = { file, afterBytes: bytes === undefined ? 1000 : count(bytes, 'BYTES') }),
  },
  '--silent-head': {
    value: 'FILE',
    doc: 'a HEAD of FILE on the hub is never answered (nor closed)',
    set: (f, [file]) => (f.silentHead = { file }),
  },
  '--endless': {
    value: 'FILE',
    doc: 'every GET of FILE sends the file, then zeros forever, with no Content-Length',
    set: (f, [file]) => (f.endless = { file }),
  },
  '--gzip': {
    value: 'FILE[:BYTES]',
    doc: 'every GET of FILE sends BYTES zeros (default 1 GiB) gzip-compressed, with Content-Encoding: gzip',
    set: (f, [file, bytes]) =>
      (f.gzip = { file, inflatedBytes: bytes === undefined ? 2 ** 30 : count(bytes, 'BYTES') }),
  },
  '--wrong-size': {
    value: 'FILE:SIZE',
    doc: 'the HEAD of FILE announces SIZE bytes (0: a 0-byte announcement with the real hash)',
    set: (f, [file, size]) => (f.wrongSize = { file, size: count(size, 'SIZE') }),
  },
  '--wrong-sha256': {
    value: 'FILE:HEX',
    doc: 'FILE is announced with this SHA-256 (64 hex digits)',
    set: (f, [file, hex]) => {
      if (!/^[0-9a-f]{64}$/.test(hex ?? '')) throw new Error('HEX must be 64 lowercase hex digits');
      f.wrongSha256 = { file, sha256: hex };
    },
  },
  '--drop': {
    value: 'FILE:BYTES[:COUNT]',
    doc: 'the next COUNT GETs of FILE (default 1) are cut after BYTES bytes of the body',
    set: (f, [file, bytes, n]) =>
      (f.drop = { file, afterBytes: count(bytes, 'BYTES'), count: n === undefined ? 1 : count(n, 'COUNT') }),
  },
  '--slow': {
    value: 'CHUNK_BYTES:PAUSE_MS',
    doc: 'bodies are sent in chunks of CHUNK_BYTES with PAUSE_MS between them',
    set: (f, [chunk, pause]) =>
      (f.slow = { chunkBytes: count(chunk, 'CHUNK_BYTES'), pauseMs: count(pause, 'PAUSE_MS') }),
  },
  '--ignore-range': {
    value: '',
    doc: 'a Range request gets the whole file (200), as a server without range support answers',
    set: (f) => (f.ignoreRange = true),
  },
};

/** A whole number >= 0 from a flag's value, or an error naming the part. */
function count(text: string | undefined, what: string): number {
  if (text === undefined || !/^\d+$/.test(text))
    throw new Error(`${what} must be a whole number >= 0, got ${JSON.stringify(text ?? '')}`);
  return Number(text);
}

/** The usage text: the serving form, the ports and every fault flag. */
export function mockHubUsage(): string {
  const width = Math.max(...Object.entries(FAULT_FLAGS).map(([flag, s]) => `${flag} ${s.value}`.trim().length));
  return [
    'usage: npx tsx scripts/mock-hub.ts org/name=DIR [org2/name2=DIR ...] [--port HUB[:CDN]] [fault flags]',
    '  serves each folder as a model of a local hub and its CDN on 127.0.0.1; prints the endpoint',
    `${'  --port HUB[:CDN]'.padEnd(width + 2)}  listen on these ports (default: any free ones)`,
    'fault flags (a file name is the file within each model, e.g. model.safetensors):',
    ...Object.entries(FAULT_FLAGS).map(([flag, s]) => `  ${`${flag} ${s.value}`.trim().padEnd(width)}  ${s.doc}`),
  ].join('\n');
}

/** Reads the command line; throws an Error naming the argument and showing the usage on a bad one. */
export function parseMockHubArgs(argv: readonly string[]): MockHubArgs {
  const out: MockHubArgs = { repos: [], ports: {}, faults: {} };
  const fail = (message: string): never => {
    throw new Error(`${message}\n${mockHubUsage()}`);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      const [id, dir] = arg.split(/=(.*)/s, 2);
      if (!dir) fail(`give org/name=DIR, got ${JSON.stringify(arg)}`);
      out.repos.push({ id, dir });
      continue;
    }
    const [flag, inline] = arg.split(/=(.*)/s, 2);
    const shape = flag === '--port' ? 'HUB[:CDN]' : FAULT_FLAGS[flag]?.value;
    if (shape === undefined) return fail(`unknown flag ${flag}`);
    const value = shape === '' ? '' : (inline ?? argv[++i] ?? '');
    if (shape !== '' && value === '') fail(`${flag} needs ${shape}`);
    try {
      const parts = value.split(':');
      if (flag === '--port')
        out.ports = { hub: count(parts[0], 'HUB'), ...(parts[1] === undefined ? {} : { cdn: count(parts[1], 'CDN') }) };
      else {
        if (shape.startsWith('FILE') && !parts[0]) throw new Error('FILE is empty');
        FAULT_FLAGS[flag].set(out.faults, parts);
      }
    } catch (e) {
      fail(`${flag}: ${(e as Error).message}`);
    }
  }
  if (out.repos.length === 0) fail('no model to serve');
  return out;
}
