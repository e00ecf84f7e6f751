// The POS terminal's first screen on a throttled phone (the issue: "usable within 1 s on a throttled mid-range
// phone profile"): Lighthouse 12.2.3's default mobile profile — a Moto G Power-sized screen, simulated
// throttling (slow 4G: 150 ms RTT, 1.6 Mbit/s down; CPU slowed 4×) — on the terminal's keypad
// (/console/terminal, a signed-in owner's session), and on a bare static HTML page served by a plain
// node:http server on this machine in the same run: the floor Lighthouse's model puts under any page, so
// the ratio says what the keypad costs over an empty page rather than what this machine is worth.
//
//   npx tsx bench/terminal-speed.ts [runs per page, 3]     (or: npm run bench -- terminal)
//
// The service runs as production does (the compiled build, bench/lib/service.ts) on the embedded database
// in memory (no PostgreSQL needed). Each page is run `runs` times, alternating, and the median kept:
// First Contentful Paint, Time to Interactive, and Total Blocking Time — the lab proxy of Interaction to
// Next Paint (INP needs a real interaction; a navigation run has none). Chromium is Debian's
// /usr/bin/chromium (test/helpers/lighthouse.ts); nothing is fetched but 127.0.0.1. Timings are never
// asserted in a test: they are reported here, and recorded in BENCHMARKS.md.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import type { Result } from 'lighthouse';
import { ConsoleBrowser, tokenOf } from '../test/console/helpers.ts';
import { launchLighthouseChromium } from '../test/helpers/lighthouse.ts';
import { median, reportFigures, type Figure } from './lib/figures.ts';
import { startBenchService, type BenchService } from './lib/service.ts';

const RUNS = Number(process.argv[2] ?? 3);
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123';
const TARGET_MS = 1000;
/** An empty page as small as a page can be and still pass for one: the baseline. */
const BARE_PAGE = '<!doctype html><html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Terminal</title></head><body><h1>Terminal</h1><p>Bs 0,00</p></body></html>';

const progress = (line: string) => process.stdout.write(`[terminal] ${line}\n`);

interface Measure { fcp: number; tti: number; tbt: number; lcp: number; score: number; benchmarkIndex: number }

function measureOf(lhr: Result): Measure {
  const ms = (id: string) => lhr.audits[id]!.numericValue!;
  return { fcp: ms('first-contentful-paint'), tti: ms('interactive'), tbt: ms('total-blocking-time'), lcp: ms('largest-contentful-paint'), score: lhr.categories.performance!.score!, benchmarkIndex: lhr.environment.benchmarkIndex };
}

/** A signed-in owner's cookie header: a merchant made through the operator API, its invitation accepted. */
async function ownerCookie(service: BenchService): Promise<string> {
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(service.url + path, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, any>>;
  };
  const merchant = await admin('/admin/v1/merchants', { name: 'Salteñería Doña Rosa, Sucursal Sopocachi', city: 'La Paz' });
  const invited = await admin(`/admin/v1/merchants/${merchant.business_code}/users`, { email: 'owner.bench@example.com' });
  const browser = new ConsoleBrowser({ baseUrl: service.url });
  const accepted = await browser.accept(tokenOf(invited.invitation_url), 'correct horse battery');
  if (accepted.status !== 303) throw new Error(`accepting the invitation answered ${accepted.status}`);
  return [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
}

async function main(): Promise<void> {
  const bare = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(BARE_PAGE);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;
  let service: BenchService | undefined;
  const chrome = await launchLighthouseChromium();
  try {
    service = await startBenchService({ DATABASE_URL: 'memory://', ADMIN_TOKEN });
    const cookie = await ownerCookie(service);
    const keypadUrl = `${service.url}/console/terminal`;
    const keypad: Measure[] = [];
    const baseline: Measure[] = [];
    progress(`${RUNS} run(s) each of the keypad and the bare page, Lighthouse mobile profile, simulated throttling; load average ${loadavg()[0]!.toFixed(1)}`);
    for (let run = 0; run < RUNS; run++) {
      const page = await chrome.audit(keypadUrl, { onlyCategories: ['performance'], extraHeaders: { Cookie: cookie, 'Accept-Language': 'es-BO' } });
      if (new URL(page.finalDisplayedUrl).pathname !== '/console/terminal') throw new Error(`the keypad run landed on ${page.finalDisplayedUrl} (the session was refused)`);
      keypad.push(measureOf(page));
      baseline.push(measureOf(await chrome.audit(bareUrl, { onlyCategories: ['performance'] })));
      progress(`run ${run + 1}: keypad FCP ${keypad.at(-1)!.fcp.toFixed(0)} ms, TTI ${keypad.at(-1)!.tti.toFixed(0)} ms; bare FCP ${baseline.at(-1)!.fcp.toFixed(0)} ms, TTI ${baseline.at(-1)!.tti.toFixed(0)} ms; BenchmarkIndex ${keypad.at(-1)!.benchmarkIndex}`);
    }
    const of = (measures: Measure[], key: keyof Measure) => Math.round(median(measures.map((m) => m[key])));
    // Lighthouse's own gauge of this machine's CPU at the time (its BenchmarkIndex; a 2020s desktop scores
    // 1,000–2,000): the simulation slows the CPU work it observed 4×, so a loaded machine reads slower.
    const how = `Lighthouse 12.2.3 mobile, simulated throttling (150 ms RTT, 1.6 Mbit/s, CPU 4×), median of ${RUNS}; BenchmarkIndex ${of(keypad, 'benchmarkIndex')}, load average ${loadavg()[0]!.toFixed(1)}`;
    const bareName = 'bare static HTML page (node:http, same run)';
    const figures: Figure[] = [
      { group: 'terminal', name: 'Terminal keypad: First Contentful Paint', value: of(keypad, 'fcp'), unit: 'ms', ceiling: { name: bareName, value: of(baseline, 'fcp') }, target: { text: 'usable within 1 s', met: of(keypad, 'fcp') <= TARGET_MS }, note: how },
      { group: 'terminal', name: 'Terminal keypad: Time to Interactive', value: of(keypad, 'tti'), unit: 'ms', ceiling: { name: bareName, value: of(baseline, 'tti') }, target: { text: 'usable within 1 s', met: of(keypad, 'tti') <= TARGET_MS }, note: how },
      { group: 'terminal', name: 'Terminal keypad: Total Blocking Time (the lab proxy of INP)', value: of(keypad, 'tbt'), unit: 'ms', note: `${how}; bare page ${of(baseline, 'tbt')} ms` },
      { group: 'terminal', name: 'Terminal keypad: Largest Contentful Paint', value: of(keypad, 'lcp'), unit: 'ms', ceiling: { name: bareName, value: of(baseline, 'lcp') }, note: `${how}; performance score ${median(keypad.map((m) => m.score))}` },
    ];
    reportFigures(figures);
  } finally {
    await chrome.close();
    await service?.stop();
    bare.close();
  }
}

await main();
