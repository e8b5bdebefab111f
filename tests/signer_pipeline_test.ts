/**
 * The real order actor paying burns in XRP through the signer process (README "Roles", the signer process), on a
 * rippled-shaped server (tests/support/rippled_rpc_server.ts; no rippled runs here): the xrp payer holds no key, its
 * signer is the socket's client, and the signer reads the same KV. Within the hourly limit a payout is signed,
 * recorded and sent; the one that would exceed it is refused, and the refusal changes nothing: the order waits in
 * processing with the reason, nothing is recorded, nothing is submitted, and the operator is alerted.
 */
import assert from "node:assert/strict";
import { intentOf } from "../actors/transition.ts";
import { serveSigner } from "../actors/signer/service.ts";
import { payerFor } from "../chains/adapter.ts";
import { explainerOf } from "../chains/explainers.ts";
import { RemoteSigner } from "../chains/signer_client.ts";
import { xrpPayer } from "../chains/xrp/payer.ts";
import { xrpReader } from "../chains/xrp/reader.ts";
import { xrplRpc } from "../chains/xrp/rpc.ts";
import { getAlert } from "../kv/alerts.ts";
import { readOutflow } from "../kv/signer_outflow.ts";
import { simBurnOrders, stepNow } from "./support/burns.ts";
import { stored } from "./support/chain_facts.ts";
import { startRippledServer } from "./support/rippled_rpc_server.ts";
import { handPipeline } from "./support/watch.ts";
import { elsewhere, hotWallet, signer, XRP } from "./support/xrp_env.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";

const OWNER = "0x" + "5e".repeat(20);

Deno.test("xrp burns through the signer process on a rippled-shaped server: paid within the hourly limit, the next refused and left waiting", async () => {
  const server = startRippledServer();
  const dir = await Deno.makeTempDir({ prefix: "issuance-signer-pipeline-" });
  let close = async () => {};
  const p = await handPipeline({
    chains: async (kv, sim) => {
      const path = `${dir}/signer.sock`;
      const served = await serveSigner({
        path,
        kv,
        signer,
        minter: null,
        facts: {
          explainer: explainerOf({
            simulated: new Set(),
            liveEvm: new Set(),
            liveUtxo: new Map(),
            liveAccount: new Set(["xrp"]),
          }),
          evm: () => undefined,
          hotWallet: (chain) => signer.address(chain, 0, "hot"),
          depositAddress: (chain, index) => signer.address(chain, index, "deposit"),
        },
        limits: { xrp: 30n * XRP },
        now: () => new Date(),
        log: () => {},
      });
      close = () => served.close();
      const remote = await RemoteSigner.connect(path, [{ chain: "xrp", index: 0, branch: "hot" }]);
      const rpc = xrplRpc({ urls: [server.url] });
      const reader = xrpReader({ rpc, confirmations: 1 });
      const payer = xrpPayer({ rpc, signer: remote });
      return {
        reader: (c) => c === "xrp" ? reader : sim.reader(c),
        minter: (c) => sim.minter(c),
        payer: (c) => c === "xrp" ? payerFor(c, payer) : sim.payer(c),
        uAssetView: (c) => sim.uAssetView!(c),
      };
    },
  });
  try {
    const h = server.hooks;
    await ensureUserWallet(p.kv, OWNER, "test-partner");
    assert.ok((await createBurnConfig(p.kv, OWNER, "xrp", elsewhere, "3141592")).ok);
    h.fund(hotWallet, 1000n * XRP);
    h.validateThrough(h.closedIndex + 1);
    const { ids: [first], payout } = await simBurnOrders(p, "xrp", OWNER);
    assert.equal(payout, 25n * XRP);
    for (let i = 0; i < 4 && !intentOf(await stored(p.kv, first)); i++) await stepNow(p, first);
    const paid = await stored(p.kv, first);
    assert.ok(intentOf(paid), JSON.stringify(paid.details));
    assert.equal(h.submissions.length, 1, "signed through the socket, recorded, sent");
    const spent = await readOutflow(p.kv, "xrp");
    assert.deepEqual(Object.values(spent.value ?? {}), [String(25n * XRP)]);

    // 25 more would bring the hour to 50 XRP, above the 30 allowed: refused, and nothing moves.
    const { ids: [second] } = await simBurnOrders(p, "xrp", OWNER);
    for (let i = 0; i < 3; i++) await stepNow(p, second);
    const waiting = await stored(p.kv, second);
    assert.equal(waiting.status, "processing");
    assert.equal(intentOf(waiting), undefined, "nothing recorded");
    assert.match(
      String(waiting.details.lastTransientError),
      /hourly outflow limit of 30000000 on xrp would be exceeded/,
    );
    assert.equal(h.submissions.length, 1, "nothing sent");
    assert.equal((await readOutflow(p.kv, "xrp")).versionstamp, spent.versionstamp, "the limit's window is unchanged");
    const alert = await getAlert(p.kv, "signer_refused", `order:${second}`);
    assert.ok(alert && alert.count >= 1, "the operator is told");
  } finally {
    await close();
    await p.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
