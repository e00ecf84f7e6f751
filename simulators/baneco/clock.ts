// Time as the bank sees it, and the bank's numbers.
//
// The bank is in Bolivia: its dates (a payment's `paymentDate`, the day of `paidQR/{yyyyMMdd}`, the
// account history) are days in America/La_Paz (UTC−4 all year), not UTC days. Everything here takes the
// instant from a clock function so tests can move time.

const LA_PAZ = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/La_Paz',
  year: 'numeric', month: '2-digit', day: '2-digit',
  hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
});

export interface LocalTime {
  /** yyyy-MM-dd in La Paz. */
  date: string;
  /** HH:mm:ss in La Paz. */
  time: string;
}

export function laPaz(instant: number): LocalTime {
  const parts: Record<string, string> = {};
  for (const part of LA_PAZ.formatToParts(new Date(instant))) parts[part.type] = part.value;
  return { date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}:${parts.second}` };
}

/** Whether `text` is a real calendar day written yyyy-MM-dd (2025-02-30 is not). */
export function isIsoDate(text: unknown): text is string {
  if (typeof text !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const [y, m, d] = text.split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d && y >= 1900;
}

/** yyyyMMdd (the form of a date in a path) → yyyy-MM-dd, or null when it is no real day. */
export function compactToIsoDate(text: string): string | null {
  if (!/^\d{8}$/.test(text)) return null;
  const iso = `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6, 8)}`;
  return isIsoDate(iso) ? iso : null;
}

/** Whole days from `from` to `to` (both yyyy-MM-dd). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** The last number issued in this process: shared by every simulator started in it, so two of them never issue the same one. */
let lastNumber = 0;

/**
 * Issues the bank's numbers: increasing, unique within the process, and (because they start from the
 * clock) not reused by the next run of the simulator either. That matters: the service keeps its
 * database across simulator restarts and identifies a bank payment by its number, so a number seen twice
 * would hide a payment. The integers stay below 2^31, since the specification says "integer" without a
 * size and a 32-bit reading of it must not break: seconds since 2024-01-01 × 10, plus a sequence when
 * more than ten are asked within a second (enough until 2030).
 */
export class Numbering {
  constructor(private readonly now: () => number) {}

  next(): number {
    const floor = Math.floor((this.now() - Date.UTC(2024, 0, 1)) / 1000) * 10;
    lastNumber = Math.max(lastNumber + 1, floor);
    return lastNumber;
  }
}

/**
 * QR ids look like the specification's example "21061401016000000003": here the La Paz day (yyMMdd), a
 * fixed "01016", and nine digits from the milliseconds since La Paz midnight (so unique across restarts
 * as long as there is less than one QR per millisecond), increasing within the process (shared by every
 * simulator in it, like the numbers above).
 */
const lastQr = { day: '', sequence: -1 };

export class QrIds {
  constructor(private readonly now: () => number) {}

  next(): string {
    const instant = this.now();
    const local = laPaz(instant);
    const [h, m, s] = local.time.split(':').map(Number) as [number, number, number];
    const sinceMidnight = ((h * 60 + m) * 60 + s) * 1000 + (instant % 1000);
    if (local.date !== lastQr.day) {
      lastQr.day = local.date;
      lastQr.sequence = -1;
    }
    lastQr.sequence = Math.max(lastQr.sequence + 1, sinceMidnight);
    return `${local.date.slice(2).replaceAll('-', '')}01016${String(lastQr.sequence).padStart(9, '0')}`;
  }
}
