/**
 * scripts/walkthrough.ts (the walkthrough through the partner client, waiting on order events) runs against a started
 * server on the simulated chains (fast blocks), with its `deno task admin` on the server's KV, until both orders have
 * completed; as tests/readme_walkthrough_test.ts runs the shell one.
 */
import assert from "node:assert/strict";
import { listApiKeys } from "../kv/api_keys.ts";
import { FAST_PIPELINE } from "./support/pipeline.ts";
import { startTestServer } from "./support/server.ts";

const ROOT = new URL("..", import.meta.url).pathname;

Deno.test("scripts/walkthrough.ts completes a mint and a burn through the client against a started server", async () => {
  const server = await startTestServer(FAST_PIPELINE);
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--check", "-A", "scripts/walkthrough.ts"], // type-checked too: no task checks scripts/
      cwd: ROOT,
      env: { BASE_URL: server.url, KV_PATH: server.kvPath, WAIT_SECONDS: "60" },
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
      return JSON.parse(line.slice(`${type} order completed: `.length));
    };
    const mint = completed("mint");
    assert.deepEqual([mint.status, mint.token, mint.amount, mint.destinationChain], [
      "completed",
      "SOL",
      "500000000",
      "base",
    ]);
    const burn = completed("burn");
    assert.deepEqual([burn.status, burn.token, burn.amount, burn.destinationWallet], [
      "completed",
      "uSOL",
      "1500000000000000000",
      "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
    ]);
    assert.equal(burn.sourceWallet, mint.destinationWallet, "one wallet minted and burned");
    // Each status came as an event, in order (no polling): pending first, completed last.
    for (const type of ["mint", "burn"]) {
      const statuses = stdout.split("\n").filter((l) => l.startsWith(`${type} order `) && !l.includes(":"));
      assert.equal(statuses[0], `${type} order pending`, stdout);
      assert.equal(statuses.at(-1), `${type} order completed`, stdout);
    }
    assert.deepEqual((await listApiKeys(server.services.kv)).map((k) => k.partnerId), ["acme"]);
  } finally {
    await server.close();
  }
});
