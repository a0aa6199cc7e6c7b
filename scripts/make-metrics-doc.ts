// `npm run docs:metrics`: writes docs/metrics.md from the metric catalog (src/schema/metrics.ts). Run it after
// changing the catalog; src/schema/metrics.test.ts fails while the file is out of date.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { METRICS_DOC_PATH, renderMetricsDoc } from '../src/schema/metrics-doc';

const path = fileURLToPath(new URL(`../${METRICS_DOC_PATH}`, import.meta.url));
writeFileSync(path, renderMetricsDoc());
console.log(`wrote ${METRICS_DOC_PATH}`);
