// The fenced blocks of the project's pages, for the two tests that hold them to the truth: a block that
// shows a file (`<!-- sample: path -->`, samples.test.ts) and every other block of code, which runs
// (runnable-samples.test.ts) unless a `<!-- not run: reason -->` line says why it cannot.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Every page a user reads: the README, the benchmarks, docs/, the SDK's and the examples' READMEs. */
export const PAGES = [
  'README.md',
  'BENCHMARKS.md',
  ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
  'sdk/README.md',
  ...readdirSync('examples', { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('README.md')).map((name) => path.join('examples', name)),
];

/** Languages of code that runs. */
export const CODE_LANGUAGES = new Set(['sh', 'js', 'ts']);
/** Languages of what does not run: data, configuration files, pictures and output (no language). */
export const SHOWN_LANGUAGES = new Set(['json', 'ini', '']);

export interface DocBlock {
  page: string;
  /** Line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  marker?: { kind: 'sample'; path: string } | { kind: 'not run'; reason: string };
}

const BLOCK = /(?:<!-- (sample|not run): ([^\n]*?) -->\n)?```([^\n`]*)\n([\s\S]*?)```/g;

export function blocksOf(page: string): DocBlock[] {
  const text = readFileSync(page, 'utf8');
  return [...text.matchAll(BLOCK)].map((match) => {
    const [, kind, note, lang, code] = match;
    const line = text.slice(0, match.index).split('\n').length + (kind ? 1 : 0);
    const marker = kind === 'sample' ? { kind: 'sample' as const, path: note! } : kind === 'not run' ? { kind: 'not run' as const, reason: note! } : undefined;
    return { page, line, lang: lang!.trim(), code: code!, marker };
  });
}

export const ALL_BLOCKS = PAGES.flatMap(blocksOf);
