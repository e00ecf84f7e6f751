// What every benchmark needs of its PostgreSQL server beyond a scratch database's URL (src/db/url.ts):
// one-off admin SQL (create / drop the scratch database) on a connection of its own.
import pg from 'pg';


/** Runs `sql` on its own short-lived connection to `serverUrl`. */
export async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
