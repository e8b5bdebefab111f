/**
 * client/ as a Node project uses it: the package (client/package.json) installed with npm into a folder of its own
 * (its two dependencies from the registry, nothing of this repository's node_modules) and run by Node 22.18, which
 * runs `.ts` files by erasing types (client/README.md). Against the started service over real HTTP: the token
 * exchange, a deposit address, the spec's exact error message typed as ApiError, and paging every order.
 *
 * Node 22.18 comes from npm (`npx -y node@22.18.0`, cached by .ci/run); without it (no registry) the test skips loudly,
 * and fails under CI=true.
 */
import assert from "node:assert/strict";
import { INVALID_ADDRESS_FORMAT } from "../messages.ts";
import { newApiKey, randomWallet, startTestServer } from "./support/server.ts";

const NODE = ["-y", "node@22.18.0"];
const inCi = Deno.env.get("CI") === "true";

async function run(cmd: string, args: string[], cwd?: string) {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { ok: out.success, stdout: text(out.stdout), stderr: text(out.stderr) };
}

async function nodeAvailable(): Promise<boolean> {
  const version = await run("npx", [...NODE, "--version"]).catch(() => null);
  if (version?.ok && version.stdout.trim() === "v22.18.0") return true;
  const message = `Node 22.18 (npx -y node@22.18.0) is not available: the client's Node run cannot be tested`;
  console.warn(`\n!!!!!!!!!!\n!!! ${message}${inCi ? "" : "; SKIPPED"}\n!!!!!!!!!!\n`);
  return false;
}

const available = await nodeAvailable();

/** What the Node program does through the client; it prints one JSON line. */
const PROGRAM = `
import { ApiError, createClient } from "./client/mod.ts";
const [baseUrl, apiKey, walletAddress] = process.argv.slice(2);
const client = createClient({ baseUrl, apiKey, walletAddress });
const wallet = await client.mint.createWallet({ chain: "sol", destinationChain: "base" });
let refused = null;
try {
  await client.burn.createWallet({ destinationChain: "sol", destinationAddress: "not-a-solana-address" });
} catch (err) {
  refused = err instanceof ApiError ? { status: err.status, message: err.message } : String(err);
}
const orders = [];
for await (const order of client.orders.list()) orders.push(order.id);
console.log(JSON.stringify({ address: wallet.address, refused, orders: orders.length, secretShown: String(client).includes(apiKey) }));
`;

Deno.test({
  name: "client/ under Node 22.18 installed with npm: token, deposit address, typed spec error, orders paged",
  ignore: !available && !inCi,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    assert.ok(available, "CI=true: Node 22.18 must be reachable through npx (.ci/run caches it)");
    const dir = await Deno.makeTempDir({ prefix: "issuance-client-node-" });
    const server = await startTestServer();
    try {
      const pkg = `${dir}/client`;
      await Deno.mkdir(pkg);
      for await (const f of Deno.readDir(new URL("../client/", import.meta.url))) {
        if (f.isFile && (f.name.endsWith(".ts") || f.name === "package.json")) {
          await Deno.copyFile(new URL(`../client/${f.name}`, import.meta.url), `${pkg}/${f.name}`);
        }
      }
      const installed = await run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], pkg);
      assert.ok(installed.ok, `npm install in client/: ${installed.stderr}`);
      await Deno.writeTextFile(`${dir}/program.ts`, PROGRAM);
      const apiKey = await newApiKey(server);
      const res = await run("npx", [...NODE, "program.ts", server.url, apiKey, randomWallet()], dir);
      assert.ok(res.ok, `node program.ts failed: ${res.stderr}`);
      const got = JSON.parse(res.stdout.trim().split("\n").at(-1)!);
      assert.match(got.address, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/, "a Solana deposit address");
      assert.deepEqual(got.refused, { status: 400, message: INVALID_ADDRESS_FORMAT.sol });
      assert.equal(got.orders, 0, "a new wallet has no orders");
      assert.equal(got.secretShown, false);
    } finally {
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
