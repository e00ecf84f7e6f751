// Digest of the service's JSON log files: distinct warnings and errors with counts, and any non-JSON lines (crashes), for the defect report.
import fs from 'node:fs';
import path from 'node:path';

export interface LogDigest { file: string; lines: number; entries: Array<{ count: number; text: string }> }

export function digestLog(file: string, maxEntries = 12): LogDigest {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const counts = new Map<string, number>();
  let lines = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    lines++;
    let key: string;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; error?: { name?: string; message?: string; code?: string; sqlstate?: string }; context?: string; statusCode?: number; route?: string };
      if ((entry.level ?? 0) < 40) continue; // the banner and info lines are not evidence
      const error = entry.error ? ` ${entry.error.name ?? ''}: ${entry.error.message ?? ''}${entry.error.sqlstate ? ` [${entry.error.sqlstate}]` : ''}${entry.error.code ? ` [${entry.error.code}]` : ''}` : '';
      key = `level ${entry.level} "${entry.msg}"${entry.context ? ` (${entry.context})` : ''}${error}`;
    } catch {
      if (/^\s*$|^ {2}|^Merchant Payments|^First run|^Sandbox keys/.test(line)) continue; // banner lines
      key = `raw: ${line.slice(0, 300)}`;
    }
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const entries = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, maxEntries).map(([text, count]) => ({ count, text }));
  return { file, lines, entries };
}

/** Digests of every log file of one scenario, as printable lines. */
export function digestScenarioLogs(logDir: string, prefix: string): string[] {
  if (!fs.existsSync(logDir)) return [];
  const out: string[] = [];
  for (const name of fs.readdirSync(logDir).filter((f) => f.startsWith(prefix)).sort()) {
    const digest = digestLog(path.join(logDir, name));
    if (digest.entries.length === 0) continue;
    out.push(`log ${digest.file}:`);
    for (const e of digest.entries) out.push(`    ${String(e.count).padStart(5)} × ${e.text}`);
  }
  return out;
}
