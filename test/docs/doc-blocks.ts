// The fenced blocks of the project's pages, for the two tests that hold them to the truth: a block that
// shows a file (`<!-- sample: path -->`, samples.test.ts) and every other block of code, which runs
// (runnable-samples.test.ts) unless a `<!-- not run: reason -->` line says why it cannot — such as README's
// live path, which needs the bank simulator and runs in live-path.test.ts; and the commands of an `sh`
// block as bash reads them, which both of those run.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';

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

/** One command of an `sh` block, with what its comments promise. */
export interface Command {
  text: string;
  /** Comment lines and the trailing comment that follow the command, before the next one. */
  comment: string;
}

/**
 * The commands of an `sh` block, as bash reads them: a command ends at a line break outside quotes that
 * no backslash continues; `#` after a blank outside quotes starts a comment, which belongs to the command
 * before it (its promises) and never ends a quote.
 */
export function commandsOf(code: string): Command[] {
  const commands: Command[] = [];
  let text = '';
  let comment = '';
  let quote: "'" | '"' | null = null;
  for (const line of code.split('\n')) {
    let inComment = false;
    for (let i = 0; i < line.length; i++) {
      const char = line[i]!;
      if (inComment) {
        comment += char;
      } else if (quote) {
        text += char;
        if (char === quote) quote = null;
      } else if (char === "'" || char === '"') {
        text += char;
        quote = char;
      } else if (char === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
        inComment = true;
        comment += char;
      } else {
        text += char;
      }
    }
    if (inComment) comment += '\n';
    if (quote || (!inComment && line.endsWith('\\'))) {
      text += '\n';
      continue;
    }
    if (text.trim() === '') {
      // A comment line on its own: a promise about the command before it.
      if (commands.length > 0) commands[commands.length - 1]!.comment += comment;
    } else {
      commands.push({ text: text.trimEnd(), comment });
    }
    text = '';
    comment = '';
  }
  expect(quote, `a quote (${quote}) is never closed in:\n${code}`).toBeNull();
  expect(text.trim(), `a command is never finished in:\n${code}`).toBe('');
  expect(commands.length, `no command in:\n${code}`).toBeGreaterThan(0);
  return commands;
}
