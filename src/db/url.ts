// PostgreSQL URLs: the same server, another database. The test harness (a database per test file), the
// benchmarks and the fault suite all make scratch databases on one server; they share this one rule.

/** `url` pointing at the database `databaseName` (user, password, host, port and options kept). */
export function databaseUrlWithName(url: string, databaseName: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${databaseName}`;
  return parsed.toString();
}
