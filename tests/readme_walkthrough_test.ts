/**
 * The README walkthrough cannot rot: its code block is `scripts/walkthrough.sh` byte for byte, and the script runs
 * with bash against a started server on the simulated chains (fast blocks), with its `deno task admin` on the server's
 * KV, until both orders have completed.
 */
import assert from "node:assert/strict";
import { listApiKeys } from "../kv/api_keys.ts";
import { FAST_PIPELINE } from "./support/pipeline.ts";
import { startTestServer } from "./support/server.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SCRIPT = `${ROOT}scripts/walkthrough.sh`;

/** The first ```bash block under README's "## Walkthrough with curl" heading, without its fences. */
function readmeBlock(readme: string): string {
  const section = readme.indexOf("## Walkthrough with curl");
  assert.ok(section >= 0, "README has the walkthrough section");
  const open = readme.indexOf("```bash\n", section);
  const close = readme.indexOf("\n```\n", open);
  assert.ok(open >= 0 && close > open, "the section has a bash block");
  return readme.slice(open + "```bash\n".length, close + 1);
}

Deno.test("README walkthrough block is scripts/walkthrough.sh, byte for byte", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  assert.equal(readmeBlock(readme), await Deno.readTextFile(SCRIPT));
});

Deno.test("scripts/walkthrough.sh completes a mint and a burn against a started server", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const out = await new Deno.Command("bash", {
      args: [SCRIPT],
      cwd: ROOT,
      env: {
        BASE_URL: server.url,
        // `deno task -q admin api-key create` in the script works on the server's KV, as an operator's would.
        KV_PATH: server.kvPath,
        PATH: `${Deno.execPath().replace(/\/[^/]*$/, "")}:${Deno.env.get("PATH") ?? ""}`,
        POLL_SECONDS: "0.05",
        WAIT_SECONDS: "60",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, `exit ${out.code}\n${stdout}\n${stderr}`);
    assert.match(stdout, /walkthrough completed: a mint and a burn\n$/);

    const completed = (type: string) => {
      const line = stdout.split("\n").find((l) => l.startsWith(`${type} order completed: `));
      assert.ok(line, `${type} line in\n${stdout}`);
      return JSON.parse(line.slice(`${type} order completed: `.length)).data.orders;
    };
    const [mint] = completed("mint");
    assert.deepEqual([mint.status, mint.token, mint.amount, mint.destinationChain], [
      "completed",
      "SOL",
      "500000000",
      "base",
    ]);
    const [burn] = completed("burn");
    assert.deepEqual([burn.status, burn.token, burn.amount, burn.destinationWallet], [
      "completed",
      "uSOL",
      "1500000000000000000",
      "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
    ]);
    assert.equal(burn.sourceWallet, mint.destinationWallet, "one wallet minted and burned");
    // The key the script's admin command created is in the server's KV.
    assert.deepEqual((await listApiKeys(server.services.kv)).map((k) => k.partnerId), ["acme"]);
  } finally {
    await server.close();
  }
});
