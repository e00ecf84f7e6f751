// Every link in the project's pages, and every docs/ page a comment cites, leads somewhere: the file is in
// the repository and the anchor is a heading of it (or an <a id>/<a name> in it), so that a reader who
// follows one lands where it says.
//   - The pages are the markdown files in git (`git ls-files '*.md'`). Their relative links — `[text](path)`,
//     `[text](path#anchor)`, `[text](#anchor)`, images, `[label]: path` definitions and HTML href/src — are
//     resolved against the page's folder (a leading `/` against the repository's root, as GitHub does);
//     links with a scheme (http, https, mailto, …) are left alone: there is no network here. Links inside
//     fenced blocks and inline code are not links and are skipped.
//   - The sources (src, test, bench, scripts, sdk, simulators, examples) cite pages as `docs/<page>.md` or
//     `docs/<page>.md#<anchor>`, in comments and in strings alike; each is read from the repository's root.
//   - An anchor is what GitHub makes of a heading: github-slugger over the heading's text as rendered
//     (code, links and emphasis reduced to their text), the second and later of a name getting -1, -2, ….
//     An anchor into a file that is not markdown may only be a line (#L12, #L12-L20) of it.
// The failure lists every broken link at once, as `file:line → target`.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A link found in a file: where it is and what it points at. */
export interface Link {
  file: string;
  line: number;
  target: string;
}

/**
 * The text of a markdown page with what is not prose blanked out — fenced blocks, inline code, HTML
 * comments — keeping every line break, so that positions still give line numbers.
 */
export function proseOf(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: { char: string; length: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (fence) {
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) fence = null;
      lines[i] = '';
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) {
      fence = { char: open[1]![0]!, length: open[1]!.length };
      lines[i] = '';
    }
  }
  return blankCodeSpans(lines.join('\n')).replace(/<!--[\s\S]*?-->/g, (comment) => comment.replace(/[^\n]/g, ' '));
}

/**
 * Inline code blanked out: a run of backticks opens a span that the next run of as many closes, within
 * the paragraph (a span may wrap lines, never a blank one); a run that nothing closes is text.
 */
function blankCodeSpans(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '`' || (i > 0 && text[i - 1] === '\\')) {
      out += text[i++];
      continue;
    }
    let run = 0;
    while (text[i + run] === '`') run++;
    const paragraphEnd = text.slice(i).search(/\n[ \t]*\n/);
    const limit = paragraphEnd === -1 ? text.length : i + paragraphEnd;
    let close = -1;
    for (let j = i + run; j < limit; j++) {
      if (text[j] !== '`') continue;
      let other = 0;
      while (text[j + other] === '`') other++;
      if (other === run) {
        close = j;
        break;
      }
      j += other - 1;
    }
    if (close === -1) {
      out += text.slice(i, i + run);
      i += run;
    } else {
      out += ' '.repeat(run) + text.slice(i + run, close).replace(/[^\n]/g, ' ') + ' '.repeat(run);
      i = close + run;
    }
  }
  return out;
}

/** The destinations of the links of a markdown page, with their lines. */
export function linksOf(file: string, markdown: string): Link[] {
  const prose = proseOf(markdown);
  const lineAt = (index: number) => prose.slice(0, index).split('\n').length;
  const links: Link[] = [];
  // Inline links and images: what follows `](`, up to a blank outside <…> or the `)` that closes it.
  for (const match of prose.matchAll(/\]\(/g)) {
    const target = destinationAt(prose, match.index + 2);
    if (target !== null) links.push({ file, line: lineAt(match.index), target });
  }
  for (const match of prose.matchAll(/^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)/gm)) {
    links.push({ file, line: lineAt(match.index), target: match[1]!.replace(/^<(.*)>$/, '$1') });
  }
  for (const match of prose.matchAll(/<(?:a|img)\s[^>]*?\b(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) {
    links.push({ file, line: lineAt(match.index), target: (match[1] ?? match[2])! });
  }
  return links;
}

function destinationAt(text: string, start: number): string | null {
  let i = start;
  while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n') i++;
  if (text[i] === '<') {
    const end = text.indexOf('>', i);
    return end === -1 ? null : text.slice(i + 1, end);
  }
  let depth = 0;
  let target = '';
  for (; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\' && i + 1 < text.length) {
      target += text[++i];
      continue;
    }
    if (/\s/.test(char)) break;
    if (char === '(') depth++;
    if (char === ')') {
      if (depth === 0) break;
      depth--;
    }
    target += char;
  }
  return target === '' ? null : target;
}

/** The anchors GitHub gives a markdown page: its headings' slugs, and the ids and names of its <a> tags. */
export function anchorsOf(markdown: string): Set<string> {
  const prose = proseOf(markdown);
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const lines = prose.split('\n');
  // The markdown itself (code spans kept) for the headings' text, the prose (code blanked) to find them.
  const source = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const atx = /^ {0,3}#{1,6}(?:[ \t]+|$)/;
    if (atx.test(lines[i]!)) {
      const text = source[i]!.replace(atx, '').replace(/(?:^|[ \t]+)#+[ \t]*$/, '').trim();
      anchors.add(slugger.slug(headingText(text)));
      continue;
    }
    // A setext heading: a paragraph line underlined with = or - (a --- after a blank line is a rule).
    const next = lines[i + 1];
    if (next !== undefined && /^ {0,3}(=+|-+)[ \t]*$/.test(next) && lines[i]!.trim() !== '' && !/^ {0,3}([-*+]|\d+[.)])[ \t]/.test(lines[i]!) && !lines[i]!.includes('|')) {
      anchors.add(slugger.slug(headingText(source[i]!.trim())));
      i++;
    }
  }
  for (const match of prose.matchAll(/<a\s[^>]*?\b(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) anchors.add((match[1] ?? match[2])!);
  return anchors;
}

/** A heading's text as GitHub renders it: code spans' contents, links' and images' text, no emphasis or tags. */
export function headingText(markdown: string): string {
  // Code spans keep their contents verbatim; the rest loses its markup.
  return markdown
    .split(/(`+)([\s\S]*?[^`])\1(?!`)/)
    .map((part, index) => {
      if (index % 3 === 1) return '';
      if (index % 3 === 2) return part.trim();
      return part
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/<[^>]+>/g, '')
        .replace(/(^|[^\w\\])(\*{1,3}|_{1,3})(?=\S)/g, '$1')
        .replace(/([^\s\\])(\*{1,3}|_{1,3})(?=[^\w]|$)/g, '$1')
        .replace(/\\([!-/:-@[-`{-~])/g, '$1')
        .replace(/&amp;/g, '&')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&nbsp;/g, ' ');
    })
    .join('');
}

/** Pages cited by `docs/<page>.md` or `docs/<page>.md#<anchor>` in a source file, read from the repository's root. */
export function citationsOf(file: string, source: string): Link[] {
  const links: Link[] = [];
  for (const match of source.matchAll(/docs\/[\w./-]+\.md(#[\w-]+)?/g)) {
    links.push({ file, line: source.slice(0, match.index).split('\n').length, target: `/${match[0]}` });
  }
  return links;
}

/** The repository: the files git knows of (tracked, or new and not ignored) that are on disk. */
export interface Repository {
  files: Set<string>;
  folders: Set<string>;
  read(file: string): string;
}

/** Why a link does not resolve, or null when it does. `target` is as written; a leading `/` is the root. */
export function brokenReason(repo: Repository, link: Link, anchorCache = new Map<string, Set<string>>()): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target) || link.target.startsWith('//')) return null;
  const hash = link.target.indexOf('#');
  const pathPart = (hash === -1 ? link.target : link.target.slice(0, hash)).replace(/\?.*$/, '');
  let anchor: string | null = hash === -1 ? null : link.target.slice(hash + 1);
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathPart);
    if (anchor !== null) anchor = decodeURIComponent(anchor);
  } catch {
    return 'not a valid URL';
  }
  const base = decoded.startsWith('/') ? '' : path.posix.dirname(link.file);
  const target = decoded === '' ? link.file : path.posix.normalize(path.posix.join(base, decoded.replace(/^\/+/, ''))).replace(/\/$/, '');
  if (target === '..' || target.startsWith('../')) return 'outside the repository';
  const isFile = repo.files.has(target);
  if (!isFile && !repo.folders.has(target)) return 'no such file';
  if (anchor === null || anchor === '') return null;
  if (!isFile) return 'an anchor into a folder';
  if (target.endsWith('.md')) {
    let anchors = anchorCache.get(target);
    if (!anchors) anchorCache.set(target, (anchors = anchorsOf(repo.read(target))));
    return anchors.has(anchor) ? null : 'no such heading';
  }
  const lines = /^L(\d+)(?:-L(\d+))?$/.exec(anchor);
  if (!lines) return 'an anchor into a file that is not markdown';
  const count = repo.read(target).split('\n').length;
  return Number(lines[1]) <= count && Number(lines[2] ?? lines[1]) <= count ? null : 'past the end of the file';
}

function repository(): Repository {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 })
    .split('\0')
    .filter((file) => file !== '' && file !== 'node_modules' && !file.startsWith('node_modules/') && existsSync(path.join(ROOT, file)));
  const files = new Set(listed);
  const folders = new Set<string>(['.']);
  for (const file of files) for (let dir = path.posix.dirname(file); dir !== '.' && !folders.has(dir); dir = path.posix.dirname(dir)) folders.add(dir);
  return { files, folders, read: (file) => readFileSync(path.join(ROOT, file), 'utf8') };
}

const SOURCES = [/^src\/.*\.ts$/, /^test\/.*\.ts$/, /^bench\/.*\.ts$/, /^scripts\//, /^sdk\/.*\.ts$/, /^simulators\/.*\.ts$/, /^examples\//];

describe('links in the docs', () => {
  const repo = repository();
  const pages = [...repo.files].filter((file) => file.endsWith('.md')).sort();
  const sources = [...repo.files].filter((file) => SOURCES.some((pattern) => pattern.test(file))).sort();
  const links = pages.flatMap((page) => linksOf(page, repo.read(page)));
  const citations = sources.flatMap((file) => citationsOf(file, repo.read(file)));

  it('are found', () => {
    expect(pages.length).toBeGreaterThan(20);
    expect(links.filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link.target)).length).toBeGreaterThan(50);
    expect(citations.length).toBeGreaterThan(50);
  });

  it('all resolve: every relative link of a page and every docs/ page a source cites', () => {
    const cache = new Map<string, Set<string>>();
    const broken = [...links, ...citations].flatMap((link) => {
      const reason = brokenReason(repo, link, cache);
      return reason === null ? [] : [`${link.file}:${link.line} → ${link.target.replace(/^\/(?=docs\/)/, '')} (${reason})`];
    });
    expect(broken, `${broken.length} broken link(s):\n${broken.join('\n')}\n`).toEqual([]);
  });
});

describe('the link checker', () => {
  const page = [
    '# Guide',
    'See [setup](#setup), [the other](other.md#a-b), `[not](code.md)` and ``[nor](this.md)``.',
    '```md',
    '[inside](fenced.md)',
    '## Not a heading',
    '```',
    '## Setup',
    '## Setup',
    '### 4. The `x_y` page — *really*',
    '### `code` first',
    '<a id="custom"></a>',
    'Wrapped `code [that](spans.md)',
    'two lines` and ![pic](img/p.png "title").',
  ].join('\n');

  it('finds links outside code, with their lines', () => {
    expect(linksOf('guide/index.md', page)).toEqual([
      { file: 'guide/index.md', line: 2, target: '#setup' },
      { file: 'guide/index.md', line: 2, target: 'other.md#a-b' },
      { file: 'guide/index.md', line: 13, target: 'img/p.png' },
    ]);
  });

  it('gives headings GitHub’s anchors, duplicates numbered', () => {
    expect([...anchorsOf(page)]).toEqual(['guide', 'setup', 'setup-1', '4-the-x_y-page--really', 'code-first', 'custom']);
  });

  it('reports a missing file, a missing heading and a folder with an anchor', () => {
    const repo: Repository = {
      files: new Set(['guide/index.md', 'guide/other.md', 'guide/img/p.png', 'src/a.ts']),
      folders: new Set(['.', 'guide', 'guide/img', 'src']),
      read: (file) => (file === 'guide/other.md' ? '# A b\n' : file === 'src/a.ts' ? 'one\ntwo\n' : page),
    };
    const reason = (target: string) => brokenReason(repo, { file: 'guide/index.md', line: 1, target });
    expect(reason('#setup-1')).toBeNull();
    expect(reason('other.md#a-b')).toBeNull();
    expect(reason('../src/a.ts#L2')).toBeNull();
    expect(reason('/src')).toBeNull();
    expect(reason('https://example.com/missing.md')).toBeNull();
    expect(reason('#setup-2')).toBe('no such heading');
    expect(reason('missing.md')).toBe('no such file');
    expect(reason('../src#x')).toBe('an anchor into a folder');
    expect(reason('../src/a.ts#L9')).toBe('past the end of the file');
    expect(reason('../../outside.md')).toBe('outside the repository');
  });
});
