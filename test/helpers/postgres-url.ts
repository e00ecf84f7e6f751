/** The same server URL pointing at another database. */
export function databaseUrlWithName(url: string, databaseName: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${databaseName}`;
  return parsed.toString();
}
