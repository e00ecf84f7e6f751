// Types of scripts/build.mjs (plain JavaScript, so that it runs before anything is compiled).
export function isStale(): boolean;
export function build(): number;
export function buildIfStale(): void;
