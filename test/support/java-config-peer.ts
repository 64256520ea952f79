import { spawnSync } from 'node:child_process';

/** Debian libyaml-snake-java and libquartz2-java: what a Java ElasticJob instance reads its config node with. */
const CLASSPATH = '/usr/share/java/snakeyaml.jar:/usr/share/java/quartz2.jar';

export type JavaReading = { fields: Record<string, unknown>; writtenBack: string } | { error: string };

/** Each document read, checked and written back by ElasticJobConfigPeer (one JVM for all). */
export function javaReads(documents: readonly string[]): JavaReading[] {
  const run = spawnSync('java', ['-cp', CLASSPATH, 'test/java/ElasticJobConfigPeer.java'], {
    input: documents.map((document) => `${document.trimEnd()}\n#end\n`).join(''),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`ElasticJobConfigPeer failed: ${run.stderr}`);
  return run.stdout
    .trim()
    .split('\n')
    .map((line) => {
      if (!line.startsWith('OK ')) return { error: line };
      const written = line.lastIndexOf(' ');
      return {
        fields: JSON.parse(line.slice('OK '.length, written)) as Record<string, unknown>,
        writtenBack: Buffer.from(line.slice(written + 1), 'base64').toString('utf8'),
      };
    });
}
