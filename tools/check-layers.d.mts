export declare const LAYERS: string[][];
export declare function unitOf(file: string): string;
export declare function arrowProblem(from: string, to: string): string | undefined;
export declare function findLayerViolations(libDir: string): string[];
