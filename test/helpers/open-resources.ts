// What a test file has opened and not yet closed (apps, databases). The leak check (leak-check.ts) fails
// the file when anything is still open after its own afterAll hooks ran (docs/architecture.md, habit 11): a pool or
// worker left running would otherwise slow or hang the rest of the suite.
const open = new Map<number, string>();
let nextId = 0;

/** Records that `what` is open; the returned function records that it was closed. */
export function trackOpen(what: string): () => void {
  const id = nextId++;
  open.set(id, what);
  return () => {
    open.delete(id);
  };
}

export function stillOpen(): string[] {
  return [...open.values()];
}
