export declare function docFiles(root: string): string[];
export declare function anchorsOf(text: string): Set<string>;
export declare function checkLinks(root: string, files?: string[]): string[];
export declare function typeScriptBlocks(
  root: string,
  files?: string[],
): { file: string; line: number; name: string | undefined; code: string }[];
export declare function checkSnippets(root: string, files?: string[]): string[];
export declare function checkCitations(root: string): string[];
