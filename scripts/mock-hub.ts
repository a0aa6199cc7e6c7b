// Serves folders as models of a local mock hub (src/testing/mock-hub.ts: the hub and its CDN on 127.0.0.1), for
// trying the CLI's hub downloads by hand with nothing from a real hub:
//   npx tsx scripts/mock-hub.ts org/name=public/models/tiny-qwen2 [org2/name2=DIR ...]
// prints the endpoint; then `npm run train -- --checkpoint org/name --hf_endpoint <endpoint> ...`. Ctrl-C stops it.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseHubId } from '../src/schema/hub-id';
import { startMockHub, type MockRepo } from '../src/testing/mock-hub';

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

const repos: Record<string, MockRepo> = {};
for (const arg of process.argv.slice(2)) {
  const [id, dir] = arg.split(/=(.*)/s, 2);
  if (!dir) throw new Error(`give org/name=DIR, got ${JSON.stringify(arg)}`);
  repos[parseHubId(id).id] = { files: filesOf(dir) };
}
if (Object.keys(repos).length === 0) throw new Error('usage: npx tsx scripts/mock-hub.ts org/name=DIR ...');
const hub = await startMockHub(repos);
console.log(hub.endpoint);
console.error(`mock hub ${hub.endpoint} (CDN ${hub.cdnOrigin}) serving ${Object.keys(repos).join(', ')}`);
const report = () => {
  console.error(`${hub.requests.length} requests:`);
  for (const r of hub.requests) console.error(`  ${r.server} ${r.method} ${r.path}${r.range ? ` ${r.range}` : ''}`);
};
process.on('SIGINT', () => {
  report();
  void hub.close().then(() => process.exit(0));
});
process.on('SIGUSR2', report);
