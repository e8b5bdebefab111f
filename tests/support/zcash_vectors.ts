/**
 * The official Zcash test vectors (zcash-test-vectors, MIT), read at test time from the shared folder next to the
 * repository (`<repo>/../shared/vectors/zcash/`, else `/work/shared/vectors/zcash/`); never copied into the repository.
 * `null` when the folder is absent: the caller skips with a message.
 */
const CANDIDATES = [
  new URL("../../../shared/vectors/zcash/", import.meta.url),
  new URL("file:///work/shared/vectors/zcash/"),
];

export type VectorRow = Record<string, unknown>;

/** The rows of `file` (e.g. "zip_0244.json") as objects keyed by the header's column names, or null when absent. */
export function zcashVectors(file: string): VectorRow[] | null {
  for (const dir of CANDIDATES) {
    let text: string;
    try {
      text = Deno.readTextFileSync(new URL(file, dir));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      throw e;
    }
    // Row 0 says where they come from; row 1 is the column names, comma separated; then the rows.
    const rows = JSON.parse(text) as unknown[][];
    const columns = String(rows[1][0]).split(",").map((c) => c.trim());
    return rows.slice(2).map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])));
  }
  return null;
}

export const VECTORS_ABSENT = "SKIPPED: the Zcash test vectors (../shared/vectors/zcash/) are absent on this machine";
