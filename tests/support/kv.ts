/** A real KV file in a temporary folder for the length of `fn`, removed afterwards. */
import { openKv } from "../../kv/open.ts";

export async function withKv(prefix: string, fn: (kv: Deno.Kv, path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix });
  const path = `${dir}/kv.sqlite3`;
  const kv = await openKv(path);
  try {
    await fn(kv, path);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}
