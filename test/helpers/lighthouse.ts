// Lighthouse (the pinned lighthouse@12.2.3: 13 needs Node 22) on Debian's /usr/bin/chromium, started by
// chrome-launcher with the flags the other browser tests use — nothing downloaded, nothing dialled but
// 127.0.0.1. Used by test/console/lighthouse.browser.test.ts (accessibility and best practices) and by
// bench/terminal-speed.ts (the mobile profile's paint and interactive times).
import * as chromeLauncher from 'chrome-launcher';
import lighthouse, { type Flags, type Result } from 'lighthouse';
import { CHROMIUM } from './chromium.ts';

const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** One Chromium for several Lighthouse runs, one after another (Lighthouse drives one page at a time). */
export interface LighthouseChromium {
  /** Lighthouse's report of `url` (`flags` over quiet logging and JSON output). */
  audit(url: string, flags?: Flags): Promise<Result>;
  close(): Promise<void>;
}

export async function launchLighthouseChromium(): Promise<LighthouseChromium> {
  const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: CHROMIUM_FLAGS, logLevel: 'silent' });
  return {
    async audit(url, flags = {}) {
      const run = await lighthouse(url, { port: chrome.port, output: 'json', logLevel: 'error', ...flags });
      if (!run) throw new Error(`Lighthouse gave no report for ${url}`);
      if (run.lhr.runtimeError) throw new Error(`Lighthouse on ${url}: ${run.lhr.runtimeError.code} ${run.lhr.runtimeError.message}`);
      return run.lhr;
    },
    async close() {
      chrome.kill();
    },
  };
}

/** The audits of `category` that did not pass, each with what it found: what a failed score assertion prints. */
export function failedAudits(lhr: Result, category: string): string[] {
  return (lhr.categories[category]?.auditRefs ?? [])
    .filter((ref) => ref.weight > 0)
    .map((ref) => lhr.audits[ref.id]!)
    .filter((audit) => audit.score !== null && audit.score < 1)
    .map((audit) => {
      const items = ((audit.details as { items?: Array<Record<string, unknown>> } | undefined)?.items ?? [])
        .map((item) => JSON.stringify((item.node as { selector?: string } | undefined)?.selector ?? item.description ?? item.source ?? item.url ?? item))
        .slice(0, 5);
      return `${audit.id} (${audit.score}): ${audit.title}${items.length > 0 ? ` — ${items.join(', ')}` : ''}`;
    });
}
