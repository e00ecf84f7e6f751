// Records each scenario's checks (pass/fail with the evidence) and figures, and prints them as they happen and at the end.

export interface CheckResult {
  scenario: string;
  name: string;
  ok: boolean;
  detail: string;
}

export interface Figure {
  scenario: string;
  name: string;
  value: string;
}

/** One run's results: printed line by line as they come, so a hung or killed run still shows what it had. */
export class Report {
  readonly checks: CheckResult[] = [];
  readonly figures: Figure[] = [];

  constructor(private readonly out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)) {}

  /** A strict check: `ok` false fails the run (exit code 1); `detail` is the evidence either way. */
  check(scenario: string, name: string, ok: boolean, detail = ''): boolean {
    this.checks.push({ scenario, name, ok, detail });
    this.out(`  ${ok ? 'PASS' : 'FAIL'} [${scenario}] ${name}${detail ? ` — ${detail}` : ''}`);
    return ok;
  }

  figure(scenario: string, name: string, value: string | number): void {
    const text = typeof value === 'number' ? formatNumber(value) : value;
    this.figures.push({ scenario, name, value: text });
    this.out(`  ·    [${scenario}] ${name}: ${text}`);
  }

  note(scenario: string, text: string): void {
    this.out(`  ..   [${scenario}] ${text}`);
  }

  failed(scenario?: string): CheckResult[] {
    return this.checks.filter((c) => !c.ok && (scenario === undefined || c.scenario === scenario));
  }

  summary(): string {
    const lines = ['', '=== fault-injection summary ==='];
    const scenarios = [...new Set([...this.checks.map((c) => c.scenario), ...this.figures.map((f) => f.scenario)])];
    for (const scenario of scenarios) {
      const checks = this.checks.filter((c) => c.scenario === scenario);
      const failed = checks.filter((c) => !c.ok);
      lines.push(`${scenario}: ${failed.length === 0 ? 'PASS' : 'FAIL'} (${checks.length - failed.length}/${checks.length} checks)`);
      for (const f of this.figures.filter((x) => x.scenario === scenario)) lines.push(`    ${f.name}: ${f.value}`);
      for (const c of failed) lines.push(`    FAIL ${c.name}${c.detail ? ` — ${c.detail}` : ''}`);
    }
    return lines.join('\n');
  }
}

export function formatNumber(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return value.toFixed(Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
}
