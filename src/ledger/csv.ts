// The CSV writer of the journal export (docs/journal.md#the-csv-export), shared by GET
// /api/v2/balance/entries.csv and `mps statement --csv`: RFC 4180 with CRLF records, and every cell made
// inert for spreadsheets. Text in the export comes from merchants (QR descriptions, references) and from
// payers' banks (names), so it is hostile input for whoever opens the file.
import { stringify, type Stringifier } from 'csv-stringify';

/**
 * Where a spreadsheet reads a formula: a cell starting with = + - @, a tab or a CR, or their full-width
 * forms (＝ ＋ － ＠, which Excel folds to ASCII), at the cell's start or after a line break inside it
 * (a reader that splits lines before parsing sees a line start there).
 */
const FORMULA_START = /(^|\r\n|\r|\n)(?=[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20])/g;

/** An amount as the service writes it (formatCentavos): `-25.00`. A spreadsheet reads it as a number. */
const SERVICE_AMOUNT = /^-?[0-9]+\.[0-9]{2}$/;

/**
 * A cell made inert: an apostrophe before each formula start, which spreadsheets show as text. Numbers are
 * the service's own (ids); an `amountColumn` keeps its minus sign only when the whole cell is an amount as
 * the service writes it, so text that reached such a column by mistake would still be neutralised.
 */
export function inertCell(value: unknown, amountColumn: boolean): unknown {
  if (typeof value !== 'string') return value;
  if (amountColumn && SERVICE_AMOUNT.test(value)) return value;
  return value.replace(FORMULA_START, "$1'");
}

/** Makes each cell of a record of `columns` inert (inertCell), the `amountColumns` read as amounts. */
export function inertRecord(columns: readonly string[], amountColumns: ReadonlySet<string>): (record: readonly unknown[]) => unknown[] {
  const isAmount = columns.map((column) => amountColumns.has(column));
  return (record) => record.map((cell, i) => inertCell(cell, isAmount[i] ?? false));
}

/**
 * A stringifier of `columns` with a header row and CRLF records. A field holding a CR or LF is always
 * quoted: with `record_delimiter: 'windows'` csv-stringify turns `quote_record_delimiter` off and quotes
 * only a field holding the whole CRLF, so a bare LF or CR would start a new record for every reader.
 */
export function csvStringifier(columns: readonly string[]): Stringifier {
  return stringify({ header: true, columns: [...columns], record_delimiter: 'windows', quote_record_delimiter: true });
}
