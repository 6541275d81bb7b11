/**
 * Whether a key a caller gave (an id, a filename, from a path or a tool's arguments) can name a
 * stored row. No stored key holds NUL: ids are made here, filenames are checked
 * (lib/filename.ts), and PostgreSQL's text cannot hold one at all (it refuses such a parameter
 * rather than finding nothing). The lookups ask this first, so a key with NUL is the same miss,
 * the same 404, on both databases.
 */
export function mayNameRow(key: string): boolean {
  return !key.includes("\u0000");
}
