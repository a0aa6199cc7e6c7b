// The one-page summary of BENCHMARKS.md, generated from the per-device detail files of docs/benchmarks/: for each
// `npm run bench` section those files hold, each preset's training step with its time against each peer, the GRPO
// step, and the real-size step. Reads the Markdown the bench writes (reportMarkdown, realSizeMarkdown), so a file
// edited by hand outside its `<!-- bench:... -->` sections does not change it. Plain text in, text out: no file system.

import type { AdapterReport } from '../gpu';

/** Where the bench writes its sections: one detail file per device, beside the summary's folder. */
export const BENCHMARKS_DIR = 'docs/benchmarks';
/** The summary page, at the repository root. */
export const BENCHMARKS_SUMMARY_PATH = 'BENCHMARKS.md';
const BEGIN = '<!-- summary: generated from docs/benchmarks/*.md by `npm run docs:benchmarks` and `npm run bench` -->';
const END = '<!-- /summary -->';

/**
 * The detail file's name (without `.md`) for an adapter: the driver for the two CPU drivers, else the vendor. Dawn
 * names an NVIDIA GPU only "nvidia", so every NVIDIA card shares one file and its sections are told apart by date.
 */
export function deviceFileName(a: Pick<AdapterReport, 'vendor' | 'architecture' | 'device' | 'description'>): string {
  const words = [a.vendor, a.architecture, a.device, a.description].join(' ').toLowerCase();
  if (words.includes('swiftshader')) return 'swiftshader';
  if (words.includes('llvmpipe') || words.includes('lavapipe')) return 'lavapipe';
  return (
    a.vendor
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'unknown-device'
  );
}

/** The opening of a detail file the bench creates for a device it has not written before. */
export function deviceFileHeader(device: string): string {
  return (
    `# Benchmarks on ${device}\n\nThe latest \`npm run bench\` results on this device, written by the bench itself: one section per ` +
    'command (presets and sections), replaced when that command runs again. Read the ratios within one section; absolute ' +
    'times depend on the machine and its load (noted in each section). The summary of every device is ' +
    '[BENCHMARKS.md](../../BENCHMARKS.md).\n'
  );
}

/** One preset of one bench section, as the summary shows it. */
export interface PresetFigures {
  preset: string;
  /** Our training step (the compare table's "ours (WGSL)", else the phase table's "step"), as written. */
  stepMs?: string;
  /** Each peer's time against ours, as written ("20.88x"), in the table's order. */
  peers: { name: string; ratio: string }[];
  /** The GRPO step of the RL trainer, as written. */
  grpoStepMs?: string;
}

/** One `npm run bench` section of a detail file. */
export interface BenchSectionFigures {
  device: string;
  command: string;
  date: string;
  presets: PresetFigures[];
  realSize: { mode: string; sPerStep: string; peak: string }[];
}

/** A Markdown table's rows as cells, the header first; separator rows dropped. */
function tables(text: string): string[][][] {
  const out: string[][][] = [];
  let current: string[][] | null = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) {
      current = null;
      continue;
    }
    const cells = line
      .slice(1, line.trimEnd().endsWith('|') ? line.trimEnd().length - 1 : undefined)
      .split('|')
      .map((c) => c.trim());
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
    if (!current) {
      current = [];
      out.push(current);
    }
    current.push(cells);
  }
  return out;
}

/** Short names of the compare table's peers, for the summary's one line per preset. */
const PEER_NAMES: Record<string, string> = {
  'TensorFlow.js WebGPU': 'TensorFlow.js',
  'jax-js WebGPU (jit)': 'jax-js',
  'CPU twin (reference JS, f32)': 'CPU twin',
  'ours, matmul untuned (blocked)': 'ours untuned',
};

function presetFigures(chunk: string): PresetFigures {
  const preset = chunk.split(/[\s(]/, 1)[0];
  const figures: PresetFigures = { preset, peers: [] };
  let phaseStep: string | undefined;
  for (const [header, ...rows] of tables(chunk)) {
    if (header[0] === 'training step, same model and batch') {
      for (const r of rows) {
        if (r[0] === 'ours (WGSL)') figures.stepMs = r[1];
        else if (r[2]) figures.peers.push({ name: PEER_NAMES[r[0]] ?? r[0], ratio: r[2] });
      }
    } else if (header[0] === 'training step phase') {
      phaseStep = rows.find((r) => r[0] === 'step')?.[1];
    } else if (header[0] === 'GRPO step phase') {
      figures.grpoStepMs = rows.find((r) => r[0] === 'step')?.[1];
    }
  }
  figures.stepMs ??= phaseStep;
  return figures;
}

/** Every bench section of a detail file, in file order. */
export function benchSections(markdown: string): BenchSectionFigures[] {
  const out: BenchSectionFigures[] = [];
  for (const m of markdown.matchAll(/<!-- bench:(.*?) -->\n([\s\S]*?)<!-- \/bench:(.*?) -->/g)) {
    if (m[1] !== m[3]) continue;
    const body = m[2];
    const device = (body.match(/^## (.*)$/m)?.[1] ?? '').split(' · ')[0].replace(/ \(software fallback.*\)$/, '');
    // Presets are the `### ` blocks; what follows the last one's tables (real size, compiles) is the section's tail.
    const presets = body
      .split(/^### /m)
      .slice(1)
      .map(presetFigures)
      .filter((p) => p.stepMs !== undefined || p.grpoStepMs !== undefined);
    const realSize = tables(body)
      .filter(([header]) => header[0] === 'mode' && header[1] === 's/step')
      .flatMap(([header, ...rows]) => {
        const peak = header.indexOf('peak GPU tensors');
        return rows.map((r) => ({ mode: r[0], sPerStep: r[1], peak: (r[peak] ?? '').replace(/ \(.*$/, '') }));
      });
    out.push({
      device,
      command: body.match(/^- command: `(.*)`$/m)?.[1] ?? '',
      date: body.match(/^- date: (\d{4}-\d\d-\d\d)/m)?.[1] ?? '',
      presets,
      realSize,
    });
  }
  return out;
}

/** The generated part of BENCHMARKS.md: per detail file, the step table and the real-size table. */
export function benchmarksSummary(files: readonly { name: string; text: string }[]): string {
  const out: string[] = [];
  for (const { name, text } of [...files].sort((a, b) => a.name.localeCompare(b.name))) {
    const sections = benchSections(text);
    if (sections.length === 0) continue;
    const title = text.match(/^# (.*)$/m)?.[1] ?? name;
    out.push(
      `### ${title.replace(/^Benchmarks on /, '')}`,
      '',
      `Detail: [${BENCHMARKS_DIR}/${name}](${BENCHMARKS_DIR}/${name}).`,
      '',
    );
    const steps = sections.flatMap((s) => s.presets.map((p) => ({ s, p })));
    if (steps.length) {
      out.push(
        '| date | command | preset | training step ms | time vs ours (peers) | GRPO step ms |',
        '| --- | --- | --- | ---: | --- | ---: |',
        ...steps.map(
          ({ s, p }) =>
            `| ${s.date} | \`${s.command}\` | ${p.preset} | ${p.stepMs ?? ''} | ${p.peers.map((q) => `${q.name} ${q.ratio}`).join(', ')} | ${p.grpoStepMs ?? ''} |`,
        ),
        '',
      );
    }
    const real = sections.flatMap((s) => s.realSize.map((r) => ({ s, r })));
    if (real.length) {
      out.push(
        'Real size (one GRPO step of SmolLM2-135M):',
        '',
        '| date | command | mode | s/step | peak GPU tensors |',
        '| --- | --- | --- | ---: | --- |',
        ...real.map(({ s, r }) => `| ${s.date} | \`${s.command}\` | ${r.mode} | ${r.sPerStep} | ${r.peak} |`),
        '',
      );
    }
  }
  return out.join('\n').trimEnd();
}

/** BENCHMARKS.md with its generated part replaced by `summary` (the hand-written text around it kept). */
export function withBenchmarksSummary(existing: string, summary: string): string {
  const block = `${BEGIN}\n\n${summary}\n\n${END}`;
  const i = existing.indexOf(BEGIN);
  const j = existing.indexOf(END);
  if (i >= 0 && j > i) return existing.slice(0, i) + block + existing.slice(j + END.length);
  const base = existing.trim() ? existing.trimEnd() : '# Benchmarks';
  return `${base}\n\n${block}\n`;
}
