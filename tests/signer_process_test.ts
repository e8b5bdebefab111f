/**
 * The three-process deployment (docs/operations.md "Roles", the signer process) on one KV file, each a real `main.ts`
 * process: ROLE=signer holds the mnemonic and the EVM minter key and listens on its unix socket; ROLE=worker is given
 * SIGNER_SOCKET and no key at all; ROLE=api holds the JWT key only. Base runs on anvil (CHAIN_MODE=devnet) with the
 * uAssets deployed, the native chains are simulated. A deposit is minted on anvil by the minter key through the
 * socket, a burn of those uAssets is paid and the transfer address's on-chain burn is signed through the socket too;
 * neither the worker's environment nor its data folder ever holds a key. A worker given a key beside SIGNER_SOCKET
 * refuses to start.
 */
import assert from "node:assert/strict";
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { type Address, toHex } from "viem";
import { buildServices } from "../app.ts";
import { serveSigner } from "../actors/signer/service.ts";
import { Deriver } from "../chains/derivation.ts";
import { Signer } from "../chains/signer.ts";
import { MinterKey } from "../chains/minter_key.ts";
import { publishTransferAddress } from "../kv/public_config.ts";
import { KEY_MATERIAL_VARIABLES, loadConfig } from "../config/env.ts";
import { newPrivateKeyPem } from "../config/secrets.ts";
import { listAlerts } from "../kv/alerts.ts";
import { createApiKey } from "../kv/api_keys.ts";
import { type BurnBatch, listBurnBatches } from "../kv/onchain_burns.ts";
import { openKv } from "../kv/open.ts";
import { anvilRpc } from "./support/anvil.ts";
import { ChildServer } from "./support/child_server.ts";
import { holder, liveBase, minter } from "./support/live_base.ts";
import { FAST_PIPELINE, type Json, terminal } from "./support/pipeline.ts";
import { TEST_BASE_URL } from "./support/server.ts";
import { startBitcoinCoreServer } from "./support/bitcoin_core_server.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";
import { utxoNetwork } from "../chains/utxo/network.ts";
import { explainUtxoTx } from "../chains/utxo/explain.ts";
import { NATIVE_CHAINS } from "../chains/catalog.ts";
import { withSigningPurpose } from "../chains/signing.ts";
import { startSignerProcess } from "../actors/signer/process.ts";
import { createOrder } from "../kv/orders.ts";
import { addCoins } from "../kv/treasury.ts";
import type { Order } from "../model/order.ts";
import { makeOrder } from "./support/orders.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const SOL_DESTINATION = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const ETH = 10n ** 18n;

async function until<T>(what: string, probe: () => Promise<T | null>, logs: () => Promise<string>): Promise<T> {
  const deadline = Date.now() + 25_000;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not after 25 s; logs: ${await logs()}`);
}

/** ROLE=signer as its own process (it serves no HTTP, so it is ready once its socket exists). */
function startSigner(dir: string, env: Record<string, string>) {
  const inherited = Object.fromEntries(
    ["HOME", "DENO_DIR", "XDG_CACHE_HOME", "PATH"].flatMap((n) => Deno.env.get(n) ? [[n, Deno.env.get(n)!]] : []),
  );
  const errLog = `${dir}/signer.err.log`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "main.ts"],
    cwd: ROOT,
    clearEnv: true,
    env: { ...inherited, ...env, ROLE: "signer" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = Deno.openSync(errLog, { write: true, create: true, append: true });
  const pipes = Promise.allSettled([child.stdout.pipeTo(out.writable), child.stderr.pipeTo(new WritableStream())]);
  return {
    log: () => Deno.readTextFile(errLog).catch(() => ""),
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      const status = await child.status;
      await pipes;
      return status;
    },
  };
}

Deno.test("signer, keyless worker and api on one KV: a mint and a burn signed through the signer's socket on anvil", async () => {
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const dir = await Deno.makeTempDir({ prefix: "issuance-signer-proc-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const socket = `${dir}/signer.sock`;
  await Deno.mkdir(`${dir}/signer-secrets`, { mode: 0o700 });
  const mnemonic = generateMnemonic(wordlist, 256);
  const mnemonicFile = `${dir}/signer-secrets/mnemonic.txt`;
  await Deno.writeTextFile(mnemonicFile, mnemonic + "\n", { mode: 0o600 });
  const jwtFile = `${dir}/jwt.pem`;
  await Deno.writeTextFile(jwtFile, await newPrivateKeyPem(), { mode: 0o600 });
  const kv = await openKv(kvPath);
  const apiKey = (await createApiKey(kv, "signer-partner")).apiKey;
  const chain = live.env();
  const { EVM_MINTER_KEY_FILE: minterKeyFile, ...chainWithoutKey } = chain;
  const common = { ...chainWithoutKey, KV_PATH: kvPath, BASE_URL: TEST_BASE_URL };
  const signer = startSigner(dir, {
    ...common,
    SIGNER_SOCKET: socket,
    MASTER_MNEMONIC_FILE: mnemonicFile,
    EVM_MINTER_KEY_FILE: minterKeyFile,
    DEPOSIT_POOL_LOW_WATER: "3",
    DEPOSIT_POOL_REFILL: "5",
  });
  const servers: ChildServer[] = [];
  const logs = async () =>
    [await signer.log(), ...await Promise.all(servers.map((s) => s.errTail()))].join("\n---\n").slice(-6000);
  try {
    await until("the signer's socket", async () => (await Deno.stat(socket).catch(() => null))?.isSocket || null, logs);
    assert.equal((await Deno.stat(socket)).mode! & 0o777, 0o660);

    // The worker's whole environment: no variable that carries a key, none inherited either.
    const workerEnv = { ...common, ...FAST_PIPELINE, ROLE: "worker", SIGNER_SOCKET: socket };
    assert.deepEqual(KEY_MATERIAL_VARIABLES.filter((name) => name in workerEnv), []);
    const worker = await ChildServer.start(dir, workerEnv, undefined, true);
    servers.push(worker);
    const api = await ChildServer.start(
      dir,
      { ...common, ROLE: "api", JWT_PRIVATE_KEY_FILE: jwtFile },
      undefined,
      true,
    );
    servers.push(api);

    // The transfer address is the signer's (its mnemonic's), read by the others from KV; fund its gas.
    const transferAddress = Deriver.fromMnemonic(mnemonic).evmAddress("m/44'/60'/0'/0/0");
    await anvilRpc(live.anvil.url, "anvil_setBalance", [transferAddress, toHex(ETH)]);

    const token = await api.token(apiKey, holder.address);
    const created = await api.call("POST", "/mint/wallets", {
      token,
      body: { chain: "sol", destinationChain: "base" },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // Pooled by the signer process: the address its mnemonic derives at index 0.
    assert.equal(created.body.data.address, Deriver.fromMnemonic(mnemonic).depositAddress("sol", 0));
    const sent = await api.call("POST", "/sim/deposits", {
      body: { chain: "sol", address: created.body.data.address, amount: "3000000000" },
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const [mint]: Json[] = await until("the mint", async () => {
      const list = await api.orders(token);
      return list.length === 1 && terminal(list[0]) ? list : null;
    }, logs);
    assert.equal(mint.status, "completed", JSON.stringify(mint));
    // Signed by the minter key the signer holds, on chain.
    const mintReceipt = await live.client.getTransactionReceipt({ hash: mint.transactionHash as `0x${string}` });
    assert.equal(mintReceipt.from.toLowerCase(), minter.address.toLowerCase());
    assert.equal(await live.balanceOf("uSOL", holder.address), 3n * ETH);

    const configured = await api.call("POST", "/burn/wallets", {
      token,
      body: { destinationChain: "sol", destinationAddress: SOL_DESTINATION },
    });
    assert.equal(configured.status, 201, JSON.stringify(configured.body));
    const redeemed = 1_250_000_000_000_000_007n;
    await live.transfer("uSOL", transferAddress, redeemed);
    const orders: Json[] = await until("the burn", async () => {
      const list = await api.orders(token);
      return list.length === 2 && list.every(terminal) ? list : null;
    }, logs);
    assert.ok(orders.every((o) => o.status === "completed"), JSON.stringify(orders));
    // The transfer address's burn of what was redeemed, signed through the socket for its batch.
    let batch: BurnBatch | undefined;
    await until("the on-chain burn", async () => {
      [batch] = await listBurnBatches(kv, "base", 10);
      return batch?.status === "burned" ? batch : null;
    }, logs);
    const burnReceipt = await live.client.getTransactionReceipt({ hash: batch!.burnedTxHash as `0x${string}` });
    assert.equal(burnReceipt.from.toLowerCase(), transferAddress.toLowerCase());
    assert.equal(await live.balanceOf("uSOL", transferAddress as Address), 0n);
    // Nothing was refused on the way.
    assert.deepEqual((await listAlerts(kv, "signer_refused")).map((a) => a.message), []);

    // The worker generated no key in the data folder (sim mode generates missing secrets there), and printed none.
    await assert.rejects(Deno.stat(`${dir}/master-mnemonic.txt`), Deno.errors.NotFound);
    assert.ok(!(await worker.errTail()).includes(mnemonic.split(" ").slice(0, 3).join(" ")));
  } finally {
    for (const s of servers) await s.stop();
    const status = await signer.stop();
    assert.equal(status.code, 0, await signer.log());
    kv.close();
    await stopMining();
    await live.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ROLE=worker with SIGNER_SOCKET refuses a mnemonic or an EVM key beside it; ROLE=signer needs its socket", () => {
  const base = { ROLE: "worker", SIGNER_SOCKET: "/run/issuance/signer.sock" };
  for (const name of KEY_MATERIAL_VARIABLES) {
    assert.throws(() => loadConfig({ ...base, [name]: "x" }), (err: Error) => {
      assert.match(err.message, new RegExp(`SIGNER_SOCKET .* but ${name} is set`));
      return true;
    });
  }
  assert.equal(loadConfig(base).signerSocket, "/run/issuance/signer.sock");
  assert.throws(() => loadConfig({ ROLE: "signer" }), /ROLE=signer needs SIGNER_SOCKET/);
  assert.throws(
    () => loadConfig({ ROLE: "signer", SIGNER_SOCKET: "/s", JWT_PRIVATE_KEY_FILE: "/k" }),
    /must not hold the JWT key/,
  );
  assert.throws(() => loadConfig({ ROLE: "api", SIGNER_SOCKET: "/s" }), /SIGNER_SOCKET is for ROLE=worker/);
  assert.throws(
    () => loadConfig({ ROLE: "signer", SIGNER_SOCKET: "/s", RUNTIME_MODE: "deploy" }),
    /not on Deno Deploy/,
  );
  assert.deepEqual(
    loadConfig({ ROLE: "signer", SIGNER_SOCKET: "/s", SIGNER_HOURLY_LIMITS: "sol=5000000000,xrp=7" })
      .signerHourlyLimits,
    { sol: 5_000_000_000n, xrp: 7n },
  );
  assert.throws(
    () => loadConfig({ ROLE: "signer", SIGNER_SOCKET: "/s", SIGNER_HOURLY_LIMITS: "sol=1.5" }),
    /SIGNER_HOURLY_LIMITS must be chain=amount pairs/,
  );
});

Deno.test("what a keyless worker (SIGNER_SOCKET) builds holds no Signer, Deriver or minter key", async () => {
  const dir = await Deno.makeTempDir({ prefix: "issuance-keyless-worker-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const kv = await openKv(kvPath);
  const signer = Signer.fromMnemonic(generateMnemonic(wordlist, 256));
  await publishTransferAddress(kv, signer.address("base", 0));
  const server = await serveSigner({
    path: `${dir}/signer.sock`,
    kv,
    signer,
    minter: null,
    facts: {
      explainer: () => undefined,
      evm: () => undefined,
      hotWallet: (c) => signer.address(c, 0, "hot"),
      depositAddress: (c, i) => signer.address(c, i, "deposit"),
    },
    limits: {},
    now: () => new Date(),
    log: () => {},
  });
  try {
    const services = await buildServices(
      loadConfig({ ROLE: "worker", KV_PATH: kvPath, CHAIN_MODE: "sim", SIGNER_SOCKET: `${dir}/signer.sock` }),
    );
    try {
      assert.equal(services.deriver, null);
      assert.ok(services.pipeline, "the worker runs the pipeline");
      assert.equal(services.uAssetTransferAddress, signer.address("base", 0));
      const found: string[] = [];
      const seen = new Set<unknown>();
      const walk = (v: unknown, path: string, depth: number) => {
        if (v === null || typeof v !== "object" || seen.has(v) || depth > 6) return;
        seen.add(v);
        if (v instanceof Deriver || v instanceof Signer || v instanceof MinterKey) found.push(path);
        for (const [k, child] of Object.entries(v)) walk(child, `${path}.${k}`, depth + 1);
      };
      walk(services, "services", 0);
      assert.deepEqual(found, []);
      // Sim mode generated no mnemonic for it either.
      await assert.rejects(Deno.stat(`${dir}/master-mnemonic.txt`), Deno.errors.NotFound);
    } finally {
      services.kv.close();
    }
  } finally {
    await server.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ROLE=signer and a keyless worker with live doge and zec (regtest-shaped nodes): the worker holds no key, and its doge payer's payout is signed by the signer process", async () => {
  const dir = await Deno.makeTempDir({ prefix: "issuance-keyless-utxo-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const mnemonic = generateMnemonic(wordlist, 256);
  const mnemonicFile = `${dir}/mnemonic.txt`;
  await Deno.writeTextFile(mnemonicFile, mnemonic + "\n", { mode: 0o600 });
  const keys = Signer.fromMnemonic(mnemonic, { doge: "regtest", zec: "regtest" });
  // CHAIN_MODE=devnet: doge and zec on regtest nodes beside simulated chains (live needs an EVM chain too).
  const doge = startBitcoinCoreServer({ chain: "regtest", network: utxoNetwork("doge", "regtest") });
  const zec = ZebraShapedServer.start({ network: utxoNetwork("zec", "regtest") });
  const chains = { KV_PATH: kvPath, CHAIN_MODE: "devnet", DOGE_RPC_URLS: doge.url, ZEC_RPC_URLS: zec.url };
  const signer = await startSignerProcess(
    loadConfig({
      ...chains,
      ROLE: "signer",
      SIGNER_SOCKET: `${dir}/signer.sock`,
      MASTER_MNEMONIC_FILE: mnemonicFile,
      SIGNER_HOURLY_LIMITS: "doge=1000000000",
    }),
    () => {},
  );
  try {
    const services = await buildServices(
      loadConfig({ ...chains, ROLE: "worker", SIGNER_SOCKET: `${dir}/signer.sock` }),
    );
    try {
      assert.deepEqual(services.chainPlan.liveUtxo.sort(), ["doge", "zec"]);
      for (const chain of ["doge", "zec"] as const) {
        const payer = services.pipeline!.chains.payer(chain);
        assert.equal(payer.changeAddress, keys.address(chain, 0, "change"), `${chain}: the signer's change key`);
        // The next change index was loaded too: a rotation needs no restart.
        assert.equal(payer.atChangeIndex!(1).changeAddress, keys.address(chain, 1, "change"));
      }
      const found: string[] = [];
      const seen = new Set<unknown>();
      const walk = (v: unknown, path: string, depth: number) => {
        if (v === null || typeof v !== "object" || seen.has(v) || depth > 6) return;
        seen.add(v);
        if (v instanceof Deriver || v instanceof Signer || v instanceof MinterKey) found.push(path);
        for (const [k, child] of Object.entries(v)) walk(child, `${path}.${k}`, depth + 1);
      };
      walk(services, "services", 0);
      assert.deepEqual(found, []);

      // A burn order's doge payout from a treasury coin: the worker's payer builds it, the signer process signs it.
      const kv = services.kv;
      const coin = {
        txHash: "ab".repeat(32),
        index: 0,
        address: keys.address("doge", 4, "deposit"),
        derivationIndex: 4,
        amount: 500_000_000n,
        height: 3,
      };
      await addCoins(kv, [{
        chain: "doge",
        outpoint: { txHash: coin.txHash, index: 0 },
        address: coin.address,
        derivationIndex: 4,
        amount: coin.amount,
        height: 3,
        coinbase: false,
      }]);
      const to = Signer.fromMnemonic(generateMnemonic(wordlist, 128), { doge: "regtest" }).address("doge", 0);
      const order = {
        ...makeOrder("0x" + "ab".repeat(20), "burn", "processing", NATIVE_CHAINS.indexOf("doge")),
        amount: (200_000_000n * 10n ** 10n).toString(),
        destinationWallet: to,
      } as Order;
      assert.ok(await createOrder(kv, order));
      const prepared = await withSigningPurpose(
        { kind: "order", id: order.id },
        () =>
          services.pipeline!.chains.payer("doge").preparePayout({
            orderId: order.id,
            to,
            amount: 200_000_000n,
            memo: null,
            coins: [coin],
          }),
      );
      const effects = await explainUtxoTx(prepared.raw, utxoNetwork("doge", "regtest"));
      assert.deepEqual(effects.outputs[0], { to, amount: 200_000_000n });
      assert.equal(effects.outputs[1].to, keys.address("doge", 0, "change"));
    } finally {
      services.kv.close();
    }
  } finally {
    await signer.close();
    await zec.close();
    await doge.close();
    await Deno.remove(dir, { recursive: true });
  }
});
