import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findLayerViolations } from '../../tools/check-layers.mjs';

/** The layer rule `npm run lint` enforces (tools/check-layers.mjs): lib/ keeps it, and a planted arrow up fails. */

function plant(files: Record<string, string>): string {
  const lib = join(mkdtempSync(join(tmpdir(), 'layers-')), 'lib');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(lib, file)), { recursive: true });
    writeFileSync(join(lib, file), text);
  }
  return lib;
}

describe('the layer rule', () => {
  it('holds for lib/', () => {
    expect(findLayerViolations('lib')).toEqual([]);
  });

  it('refuses an arrow up, a cycle, integrations importing each other, and a folder with no layer', () => {
    const lib = plant({
      'registry/center.ts': "import { JobScheduler } from '../job/job-scheduler.js';\n",
      'job/job-scheduler.ts': "import type { Center } from '../registry/center.js';\nexport class JobScheduler {}\n",
      'events/bus.ts': "export {\n  publish,\n} from '../job/job-scheduler.js';\n",
      'cli/commands/jobs.command.ts': "import { runCli } from '../run.js';\n",
      'cli/run.ts': "import { jobs } from './commands/jobs.command.js';\nimport { table } from './format/table.js';\n",
      'cli/format/table.ts': 'export const table = 1;\n',
      'console/page.ts': "import type { Pattern } from '../microservices/patterns.js';\n",
      'microservices/patterns.ts': "import '../lifecycle/operator.js';\n",
      'lifecycle/operator.ts': "const lazy = () => import('../console/page.js');\n",
      'scheduling/cron.ts': "import { x } from '../errors/errors.js';\n",
      'errors/errors.ts': 'export const x = 1;\n',
      'job/config/config.service.ts': "import type { Sharding } from '../sharding/sharding.service.js';\n",
      'job/sharding/sharding.service.ts': "import type { Config } from '../config/config.service.js';\n",
    });
    expect(findLayerViolations(lib).sort()).toEqual([
      "lib/cli/commands/jobs.command.ts: an arrow up: cli/commands/ (layer 24) may not import cli/ (layer 25) (import '../run.js')",
      "lib/console/page.ts: integrations stay apart: console/ may not import microservices/ (import '../microservices/patterns.js')",
      "lib/events/bus.ts: an arrow up: events/ (layer 4) may not import job/ (layer 8) (import '../job/job-scheduler.js')",
      "lib/job/config/config.service.ts: an arrow up: job/config/ (layer 11) may not import job/sharding/ (layer 17) (import '../sharding/sharding.service.js')",
      "lib/lifecycle/operator.ts: an arrow up: lifecycle/ (layer 21) may not import console/ (layer 25) (import '../console/page.js')",
      "lib/registry/center.ts: an arrow up: registry/ (layer 3) may not import job/ (layer 8) (import '../job/job-scheduler.js')",
      "lib/scheduling/cron.ts: scheduling/ has no layer: add it to LAYERS in tools/check-layers.mjs (import '../errors/errors.js')",
    ]);
  });
});
