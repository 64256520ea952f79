/**
 * Namespace-relative paths (what the library uses: `/{job}/...`) and full ZooKeeper paths (`/{namespace}/{job}/...`).
 * The namespace node itself is `/` relative.
 */
export class NamespacePaths {
  private readonly prefix: string;
  /** `prefix/`, made once: every watch notification is checked against it. */
  private readonly prefixSlash: string;

  constructor(readonly namespace: string) {
    this.prefix = `/${namespace}`;
    this.prefixSlash = `${this.prefix}/`;
  }

  full(path: string): string {
    return path === '/' ? this.prefix : `${this.prefix}${path}`;
  }

  /** The relative path of a full one; a path outside the namespace comes back as it is. */
  relative(fullPath: string): string {
    if (fullPath === this.prefix) return '/';
    return fullPath.startsWith(this.prefixSlash) ? fullPath.slice(this.prefix.length) : fullPath;
  }

  isInside(fullPath: string): boolean {
    return fullPath === this.prefix || fullPath.startsWith(this.prefixSlash);
  }
}
