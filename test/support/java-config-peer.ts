import { execFile } from 'node:child_process';
import { javaPeer } from './java.js';

export type JavaReading = { fields: Record<string, unknown>; writtenBack: string } | { error: string };

/**
 * Each document read, checked and written back by ElasticJobConfigPeer (one JVM for all). Asynchronous: a JVM takes
 * seconds to start on a loaded machine, and a test waiting synchronously would starve its own ZooKeeper sessions
 * (their pings) past their timeout.
 */
export async function javaReads(documents: readonly string[]): Promise<JavaReading[]> {
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(
      'java',
      javaPeer('ElasticJobConfigPeer'),
      { encoding: 'utf8', timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, out, err) =>
        error ? reject(new Error(`ElasticJobConfigPeer failed: ${err || error.message}`)) : resolve(out),
    );
    child.stdin!.end(documents.map((document) => `${document.trimEnd()}\n#end\n`).join(''));
  });
  return stdout
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
