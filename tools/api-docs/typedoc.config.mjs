// TypeDoc's settings for the API reference (npm run docs:api). The entry points are the package's `exports`.
import { OptionDefaults } from 'typedoc';

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  entryPoints: [
    '../../lib/index.ts',
    '../../lib/terminus/index.ts',
    '../../lib/opentelemetry/index.ts',
    '../../lib/postgres/index.ts',
    '../../lib/microservices/index.ts',
    '../../lib/console/index.ts',
    '../../lib/mysql/index.ts',
  ],
  tsconfig: '../../tsconfig.build.json',
  name: 'nestjs-elastic-job',
  readme: 'none',
  excludePrivate: true,
  excludeInternal: true,
  // Source links would need a public repository URL; the declarations are in the package.
  disableSources: true,
  // Nest's own marker on public classes, used here as Nest uses it.
  blockTags: [...OptionDefaults.blockTags, '@publicApi'],
  // Types the public API names but does not export (the registry's injected collaborators) are listed, not failed.
  validation: { notExported: true, invalidLink: true, notDocumented: false },
};
