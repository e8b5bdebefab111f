/**
 * The real order actor paying burns in XRP through the signer process (docs/operations.md "Roles", the signer process),
 * on a rippled-shaped server (tests/support/rippled_rpc_server.ts; no rippled runs here): the xrp payer holds no key,
 * its signer is the socket's client, and the signer reads the same KV. Within the hourly limit a payout is signed,
 * recorded and sent; the one that would exceed it is refused, and the refusal changes nothing: the order waits in
 * processing with the reason, nothing is recorded, nothing is submitted, and the operator is alerted. The same for zec
 * on a Zebra-shaped server (tests/support/zebra_rpc_server.ts, which verifies every ZIP-244 signature as Zebra's
 * mempool does; no Zebra runs here): the payout's coins come from the treasury records the signer reads itself.
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
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { Signer } from "../chains/signer.ts";
import { UTXO_TX, utxoAdapters } from "../chains/utxo/index.ts";
import { type UtxoNetwork, utxoNetwork } from "../chains/utxo/network.ts";
import type { UtxoTxFamily } from "../chains/utxo/tx.ts";
import type { UtxoChain } from "../chains/catalog.ts";
import type { FeeFunction } from "../chains/shared/coin_select.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import { addCoins } from "../kv/treasury.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";
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

Deno.test("zec burns through the signer process on a Zebra-shaped server: the treasury's coins signed by the signer, accepted and mined, the next refused by the limit", async () => {
  const network = utxoNetwork("zec", "mainnet");
  const zebra = ZebraShapedServer.start({ network, initialBlocks: 3 });
  const dir = await Deno.makeTempDir({ prefix: "issuance-signer-zec-pipeline-" });
  const keys = Signer.fromMnemonic(generateMnemonic(wordlist, 256));
  const fee = utxoFee("zec");
  const ZEC = 100_000_000n;
  let close = async () => {};
  let zec: ReturnType<typeof utxoAdapters> | undefined;
  const p = await handPipeline({
    utxoGenesis: 0n,
    chains: async (kv, sim) => {
      const path = `${dir}/signer.sock`;
      const utxo = new Map<UtxoChain, { network: UtxoNetwork; family: UtxoTxFamily; fee: FeeFunction }>([
        ["zec", { network, family: UTXO_TX.zec, fee }],
      ]);
      const served = await serveSigner({
        path,
        kv,
        signer: keys,
        minter: null,
        facts: {
          explainer: explainerOf({ simulated: new Set(), liveEvm: new Set(), liveUtxo: utxo, liveAccount: new Set() }),
          evm: () => undefined,
          hotWallet: (chain, index) => keys.address(chain, index, "hot"),
          depositAddress: (chain, index) => keys.address(chain, index, "deposit"),
          changeAddress: (chain, index) => keys.address(chain, index, "change"),
        },
        utxo: (chain) => utxo.get(chain),
        limits: { zec: 15n * ZEC / 100n },
        now: () => new Date(),
        log: () => {},
      });
      close = () => served.close();
      const remote = await RemoteSigner.connect(path, [{ chain: "zec", index: 0, branch: "change" }]);
      const rpc = utxoRpc({ chain: "zec", urls: [zebra.url] });
      zec = utxoAdapters({
        chain: "zec",
        network,
        rpc,
        signer: remote,
        settings: { confirmations: 1, fee, expiryWindow: 40 },
      });
      const adapters = zec;
      return {
        ...sim,
        reader: (c) => c === "zec" ? adapters.reader : sim.reader(c),
        payer: ((c: Parameters<typeof sim.payer>[0]) =>
          c === "zec" ? adapters.payer : sim.payer(c)) as typeof sim.payer,
      };
    },
  });
  try {
    // The treasury: two coins at our deposit addresses, confirmed on the node and recorded as the watcher records them.
    for (const [index, amount] of [[1, 2n * ZEC], [2, 3n * ZEC]] as const) {
      const address = keys.address("zec", index, "deposit");
      const { txid } = zebra.deposit(address, amount);
      zebra.mine(1);
      await addCoins(p.kv, [{
        chain: "zec",
        outpoint: { txHash: txid, index: 0 },
        address,
        derivationIndex: index,
        amount,
        height: 3,
        coinbase: false,
      }]);
    }
    await ensureUserWallet(p.kv, OWNER, "test-partner");
    const destination = Signer.fromMnemonic(generateMnemonic(wordlist, 128)).address("zec", 0);
    assert.ok((await createBurnConfig(p.kv, OWNER, "zec", destination, null)).ok);
    const { ids: [first], payout } = await simBurnOrders(p, "zec", OWNER);
    assert.equal(payout, ZEC / 10n, "uZEC's minimum burn, 0.1 ZEC");
    for (let i = 0; i < 4 && !intentOf(await stored(p.kv, first)); i++) await stepNow(p, first);
    const paid = await stored(p.kv, first);
    const intent = intentOf(paid);
    assert.ok(intent, JSON.stringify(paid.details));
    zebra.mine(1);
    const status = await zec!.reader.txStatus(intent.txHash);
    assert.equal(status.state, "included", `the node verified every signature and mined it: ${JSON.stringify(status)}`);
    assert.deepEqual(Object.values((await readOutflow(p.kv, "zec")).value ?? {}), [String(ZEC / 10n)]);

    // 0.1 ZEC more would bring the hour to 0.2, above the 0.15 allowed: refused, the order waits, nothing recorded.
    const { ids: [second] } = await simBurnOrders(p, "zec", OWNER);
    for (let i = 0; i < 3; i++) await stepNow(p, second);
    const waiting = await stored(p.kv, second);
    assert.equal(waiting.status, "processing");
    assert.equal(intentOf(waiting), undefined, "nothing recorded");
    assert.match(
      String(waiting.details.lastTransientError),
      /hourly outflow limit of 15000000 on zec would be exceeded/,
    );
  } finally {
    await close();
    await p.close();
    await zebra.close();
    await Deno.remove(dir, { recursive: true });
  }
});
