// Serves folders as models of a local mock hub (src/testing/mock-hub.ts: the hub and its CDN on 127.0.0.1), for
// trying the CLI's and the page's hub downloads by hand with nothing from a real hub, with the faults the tests
// inject given as flags (src/testing/mock-hub-flags.ts; --help lists them):
//   npx tsx scripts/mock-hub.ts org/name=public/models/tiny-qwen2 [org2/name2=DIR ...] [--port 4311:4312] [--stall model.safetensors:1000 ...]
// prints the endpoint; then `npm run train -- --checkpoint org/name --hf_endpoint <endpoint> ...`. Ctrl-C stops it
// and lists the requests it answered (so does SIGUSR2).

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseHubId } from '../src/schema/hub-id';
import { startMockHub, type MockRepo } from '../src/testing/mock-hub';
import { mockHubUsage, parseMockHubArgs, type MockHubArgs } from '../src/testing/mock-hub-flags';

function filesOf(root: string, dir = root): Record<string, Uint8Array> {
  return Object.assign(
    {},
    ...readdirSync(dir).map((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory()
        ? filesOf(root, p)
        : { [relative(root, p).split('\\').join('/')]: new Uint8Array(readFileSync(p)) };
    }),
  );
}

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(mockHubUsage());
  process.exit(0);
}
let args: MockHubArgs;
try {
  args = parseMockHubArgs(argv);
} catch (e) {
  console.error((e as Error).message);
  process.exit(2);
}
const repos: Record<string, MockRepo> = {};
for (const { id, dir } of args.repos) repos[parseHubId(id).id] = { files: filesOf(dir) };
const hub = await startMockHub(repos, args.ports);
Object.assign(hub.faults, args.faults);
console.log(hub.endpoint);
console.error(`mock hub ${hub.endpoint} (CDN ${hub.cdnOrigin}) serving ${Object.keys(repos).join(', ')}`);
for (const [fault, how] of Object.entries(args.faults)) console.error(`  fault ${fault}: ${JSON.stringify(how)}`);
const report = () => {
  console.error(`${hub.requests.length} requests:`);
  for (const r of hub.requests) console.error(`  ${r.server} ${r.method} ${r.path}${r.range ? ` ${r.range}` : ''}`);
};
process.on('SIGINT', () => {
  report();
  void hub.close().then(() => process.exit(0));
});
process.on('SIGUSR2', report);
