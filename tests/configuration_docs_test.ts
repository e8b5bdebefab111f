/**
 * docs/configuration.md lists every environment variable the service reads: each name config/*.ts reads (a key of the
 * environment schema, `env.NAME`, `env["NAME"]`, `Deno.env.get("NAME")`, a quoted variable name handed to a reader, or
 * a per-chain `${prefix}_NAME`) appears there in backticks, as itself or as `<CHAIN>_NAME`. Pure reads of the tree.
 */
import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url);
const NAME = "[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+";

/** Every variable name config/ reads, per-chain ones by their suffix. */
async function namesRead(): Promise<Set<string>> {
  const names = new Set<string>();
  for await (const entry of Deno.readDir(new URL("config/", ROOT))) {
    if (!entry.isFile || !entry.name.endsWith(".ts")) continue;
    const source = await Deno.readTextFile(new URL(`config/${entry.name}`, ROOT));
    const patterns = [
      new RegExp(`^\\s+(${NAME}|PORT|ROLE|PIPELINE): z\\.`, "gm"), // the environment schema's keys
      new RegExp(`\\benv\\??\\.(${NAME}|PORT|ROLE)\\b`, "g"),
      new RegExp(`\\benv\\[["'\`](${NAME})["'\`]\\]`, "g"),
      new RegExp(`Deno\\.env\\.get\\(["'](${NAME}|PORT|ROLE)["']\\)`, "g"),
      new RegExp(`"(${NAME})"`, "g"), // a variable's name handed to a reader (`wholeFromEnv(env, "CRON_RUN_MS", ...)`)
      new RegExp(`\\$\\{[^}]+\\}_(${NAME.replace("(?:_", "(?:_?")})\``, "g"), // `${prefix}_RPC_URLS`
    ];
    for (const re of patterns) for (const m of source.matchAll(re)) names.add(m[1]);
  }
  return names;
}

Deno.test("the reader finds the variables this test is about", async () => {
  const names = await namesRead();
  for (const known of ["PORT", "KV_PATH", "ROLE", "WATCH_CHAINS", "SOL_POLL_INTERVAL_MS", "RPC_URLS", "UASSETS"]) {
    assert.ok(names.has(known), `${known} is read by config/`);
  }
});

Deno.test("docs/configuration.md documents every environment variable config/ reads", async () => {
  const doc = await Deno.readTextFile(new URL("docs/configuration.md", ROOT));
  const undocumented = [...await namesRead()].filter((name) =>
    !doc.includes(`\`${name}\``) && !doc.includes(`\`<CHAIN>_${name}\``) &&
    // `DOGE_RPC_URLS`, `ZEC_RPC_URLS` and the like: a family written out counts for its suffix.
    !new RegExp(`\`[A-Z{},]+_${name}\``).test(doc)
  ).sort();
  assert.deepEqual(undocumented, [], "add these to docs/configuration.md");
});
