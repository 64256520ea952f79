import { execFileSync } from 'node:child_process';

/**
 * What `find()` finds of a Debian package the harness starts (a server's binary, its directory); when it finds
 * nothing and this runs as root (CI, a container), installs `pkg` with apt-get first. Throws `missing` when it is
 * still not there.
 */
export function ensureDebianPackage<T>(
  pkg: string,
  find: () => T | undefined,
  missing = `${pkg} is not installed: sudo apt-get install ${pkg}`,
): T {
  const found = find();
  if (found !== undefined) return found;
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    process.stderr.write(`[test harness] installing Debian package: ${pkg}\n`);
    execFileSync('sh', ['-c', `apt-get update && apt-get install -y --no-install-recommends ${pkg}`], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    const installed = find();
    if (installed !== undefined) return installed;
  }
  throw new Error(missing);
}
