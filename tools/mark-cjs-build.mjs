// Marks dist/cjs as CommonJS: the package is "type": "module", so without this Node (and TypeScript's node16
// resolution) would read dist/cjs/*.js and *.d.ts as ES modules. The CLI is left out of this build
// (docs/getting-started.md "Supported versions"): it runs as `npx nestjs-elastic-job` from the ES build whatever the
// app's module format.
import { writeFileSync } from 'node:fs';

writeFileSync('dist/cjs/package.json', `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
