/**
 * The order actor (`stepOrder`) against a real EVM node: anvil as Base, the EVM reader and minter on it, simulated
 * native chains beside it, a PipelineContext built here with an injected clock, and steps taken by hand so each
 * decision is seen. Covers a mint whose nonce was used by another transaction (proven dead at the finality tag,
 * re-signed once), burns and mint receipts counted only at the chain's finality tag, and the alert for errors that
 * persist (on the simulated chains, where an RPC outage can be injected).
 */
import assert from "node:assert/strict";
import { createWalletClient, type Hex, http, isHex, keccak256, parseTransaction, toHex, zeroAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type PipelineContext, pipelineSettings } from "../actors/context.ts";
import { PERSISTENT_ERRORS_ALERT_AFTER, stepOrder } from "../actors/order_actor.ts";
import { intentOf } from "../actors/transition.ts";
import { watchOnce } from "../actors/watcher.ts";
import type { Chains } from "../chains/adapter.ts";
import { EVM, type EvmChain, NATIVE, nativeToWei } from "../chains/catalog.ts";
import { allowanceSubject } from "../actors/minter_allowance.ts";
import { MINTED_EVENT } from "../chains/evm/abi.ts";
import { deployUAssets } from "../chains/evm/deploy.ts";
import { type EvmChainAdapters, evmChainAdapters } from "../chains/evm/index.ts";
import { simChains } from "../chains/sim/adapters.ts";
import { UASSET_ABI } from "../contracts/uasset.ts";
import { getAlert } from "../kv/alerts.ts";
import { createBurnConfig } from "../kv/burn_configs.ts";
import { openKv } from "../kv/open.ts";
import { createOrder, listOrderIdsByStatus } from "../kv/orders.ts";
import { newOrderId, type Order } from "../model/order.ts";
import { ensureUserWallet } from "../kv/user_wallets.ts";
import { type Anvil, ANVIL_PRIVATE_KEYS, anvilRpc, deployTestUAssets, startAnvil } from "./support/anvil.ts";
import { stored } from "./support/chain_facts.ts";
import { evmKvState } from "../kv/chain_state.ts";

const CHAIN = "base" as const;
const minter = privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]);
const holder = privateKeyToAccount(ANVIL_PRIVATE_KEYS[2]);
const TRANSFER_ADDRESS = privateKeyToAccount(ANVIL_PRIVATE_KEYS[5]).address;
const SOL_DESTINATION = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
/** Base's live confirmations in these tests: far fewer than the finality tag's depth, so the tag decides. */
const CONFIRMATIONS = 2;

interface AnvilPipeline {
  anvil: Anvil;
  kv: Deno.Kv;
  ctx: PipelineContext;
  evm: EvmChainAdapters;
  uAssets: Awaited<ReturnType<typeof deployUAssets>>["addresses"];
  logs: string[];
  /** One actor step, the clock moved past any wait or backoff the previous step scheduled. */
  step(orderId: string): Promise<string>;
  mine(blocks: number): Promise<unknown>;
  close(): Promise<void>;
}

async function anvilPipeline(opts: { slotsInAnEpoch?: number } = {}): Promise<AnvilPipeline> {
  const anvil = await startAnvil({ chainId: EVM[CHAIN].chainId, slotsInAnEpoch: opts.slotsInAnEpoch });
  const dir = await Deno.makeTempDir({ prefix: "evm-order-actor-test-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  const close = async () => {
    kv.close();
    await anvil.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    const { addresses: uAssets, deployedAtBlock } = await deployTestUAssets(anvil.url, minter.address, {
      chain: CHAIN,
    });
    const evm = await evmChainAdapters({
      chain: CHAIN,
      state: evmKvState(kv),
      urls: [anvil.url],
      account: minter,
      uAssets,
      transferAddress: TRANSFER_ADDRESS,
    });
    const sim = simChains(kv);
    const isLive = (c: string): c is EvmChain => c === CHAIN;
    const chains: Chains = {
      reader: (c) => (isLive(c) ? evm.reader : sim.reader(c)),
      minter: (c) => (isLive(c) ? evm.minter : sim.minter(c)),
      payer: (c) => sim.payer(c),
    };
    let clock = Date.now();
    const logs: string[] = [];
    const ctx: PipelineContext = {
      kv,
      chains,
      settings: pipelineSettings({
        blockMs: 50,
        confirmationTimeoutMs: 3_600_000,
        transferAddress: TRANSFER_ADDRESS,
        live: { [CHAIN]: { confirmations: CONFIRMATIONS, blockMs: 50, startBlock: Number(deployedAtBlock) } },
      }),
      now: () => new Date(clock),
      log: (msg, err) => logs.push(err ? `${msg}: ${err}` : msg),
    };
    return {
      anvil,
      kv,
      ctx,
      evm,
      uAssets,
      logs,
      step: (orderId) => {
        clock += 10_000; // past retryMaxMs and every wait of a 50 ms block time
        return stepOrder(ctx, orderId);
      },
      mine: (blocks) => anvilRpc(anvil.url, "anvil_mine", [toHex(blocks)]),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A sol -> base mint order whose deposit is confirmed: the next step signs the mint. */
async function processingMint(kv: Deno.Kv, label: string, destinationChain: EvmChain = CHAIN): Promise<Order> {
  const owner = privateKeyToAccount(keccak256(toHex(`evm-order-actor-test:${label}`))).address.toLowerCase();
  await ensureUserWallet(kv, owner, "partner-test");
  const id = newOrderId();
  const now = new Date().toISOString();
  const order: Order = {
    id,
    type: "mint",
    status: "processing",
    sourceChain: "sol",
    destinationChain,
    token: "SOL",
    amount: (NATIVE.sol.minimumDeposit * 5n).toString(),
    sourceWallet: "SimSender1111111111111111111111111111111111",
    destinationWallet: owner,
    workflowId: `order-actor-${id}`,
    transactionHash: null,
    errorMessage: null,
    createdAt: now,
    updatedAt: null,
    owner,
    details: {
      depositId: keccak256(toHex(`evm-order-actor-test:deposit:${label}`)),
      source: { chain: "sol", txHash: `sim-${label}`, index: 0, blockNumber: 1 },
      confirmBy: now,
    },
  };
  assert.ok(await createOrder(kv, order));
  return order;
}

Deno.test("order actor on anvil: a mint whose nonce was used elsewhere is proven dead and re-signed once", async () => {
  // safe = latest - 4: finality is a few blocks away, not 32.
  const p = await anvilPipeline({ slotsInAnEpoch: 4 });
  try {
    const order = await processingMint(p.kv, "dead-nonce");
    const depositId = order.details.depositId;
    assert.ok(isHex(depositId));

    // Signed and recorded, then the process dies before broadcasting.
    p.ctx.faultPoint = (point) => {
      if (point === "after-record") throw new Error("crash after recording");
    };
    await assert.rejects(() => p.step(order.id), /crash after recording/);
    p.ctx.faultPoint = undefined;
    const recorded = await stored(p.kv, order.id);
    assert.equal(recorded.status, "minting");
    const first = intentOf(recorded)!;
    const nonce = parseTransaction(first.raw as Hex).nonce!;

    // Someone with the minter key uses that nonce for another transaction, which is mined.
    const wallet = createWalletClient({ account: minter, chain: p.evm.client.chain, transport: http(p.anvil.url) });
    const foreign = await wallet.sendTransaction({ to: zeroAddress, value: 1n, nonce });
    await p.evm.client.waitForTransactionReceipt({ hash: foreign, pollingInterval: 10 });

    // Not yet at the finality tag: nothing is proven, the order waits (the broadcast fails as transient).
    await p.step(order.id);
    assert.equal((await stored(p.kv, order.id)).status, "minting");
    assert.equal((await p.evm.reader.txStatus(first.txHash, { raw: first.raw })).state, "unknown");
    assert.equal(await getAlert(p.kv, "nonce_used_elsewhere", first.txHash), null);

    // Past the finality tag: the attempt is dead, the order goes back to processing with the proof kept.
    await p.mine(5);
    await p.step(order.id);
    const back = await stored(p.kv, order.id);
    assert.equal(back.status, "processing", JSON.stringify(back.details));
    assert.equal(intentOf(back), undefined);
    const dead = back.details.deadIntents ?? [];
    assert.equal(dead.length, 1);
    assert.equal(dead[0].txHash, first.txHash);
    assert.equal(dead[0].raw, first.raw);
    assert.deepEqual(dead[0].proof, {
      kind: "conflict",
      consumed: { kind: "nonce", account: minter.address, nonce },
      spentBy: null,
    });
    assert.match(dead[0].detail, new RegExp(`nonce ${nonce} of ${minter.address}`, "i"));
    assert.match(dead[0].detail, /"safe"/);
    const alert = await getAlert(p.kv, "nonce_used_elsewhere", first.txHash);
    assert.ok(alert, "an operator is told");
    assert.equal(alert.chain, CHAIN);
    assert.match(alert.message, new RegExp(order.id));

    // The next step asks the contract (not minted), signs a new mint at a fresh nonce and sends it (automine).
    await p.step(order.id);
    const resent = await stored(p.kv, order.id);
    assert.equal(resent.status, "minting");
    const second = intentOf(resent);
    assert.ok(second);
    assert.notEqual(second.txHash, first.txHash);
    assert.equal(parseTransaction(second.raw as Hex).nonce, nonce + 1);
    const receipt = await p.evm.client.waitForTransactionReceipt({ hash: second.txHash as Hex, pollingInterval: 10 });
    assert.equal(receipt.status, "success");

    // Enough confirmations but not yet at the finality tag: the mint's own receipt does not count yet.
    await p.mine(CONFIRMATIONS);
    const early = await p.evm.reader.txStatus(second.txHash, { raw: second.raw });
    assert.ok(early.state === "included" && early.confirmations > CONFIRMATIONS && early.final === false);
    await p.step(order.id);
    assert.equal((await stored(p.kv, order.id)).status, "minting");

    await p.mine(5);
    await p.step(order.id);
    const done = await stored(p.kv, order.id);
    assert.equal(done.status, "completed", JSON.stringify(done.details));
    assert.equal(done.transactionHash, second.txHash);
    assert.deepEqual(done.details.deadIntents, dead, "the dead attempt stays on record");
    const minted = await p.evm.client.getLogs({
      address: p.uAssets.uSOL,
      event: MINTED_EVENT,
      args: { depositId },
      fromBlock: 0n,
      toBlock: "latest",
    });
    assert.equal(minted.length, 1, "exactly one Minted log for the deposit id");
    assert.equal(minted[0].transactionHash, second.txHash);
    assert.equal(await p.evm.minter.mintedBy(depositId), second.txHash);
  } finally {
    await p.close();
  }
});

Deno.test("order actor on anvil: the admin rotates the minter key while a mint is in flight; the old key's reverted mint is re-signed by the new one, minted once", async () => {
  // safe = latest - 4: finality is a few blocks away, not 32.
  const p = await anvilPipeline({ slotsInAnEpoch: 4 });
  try {
    const order = await processingMint(p.kv, "rotation");
    const depositId = order.details.depositId;
    assert.ok(isHex(depositId));

    // Signed by the old key and recorded; the process stops before broadcasting (in flight through the rotation).
    p.ctx.faultPoint = (point) => {
      if (point === "after-record") throw new Error("stopped after recording");
    };
    await assert.rejects(() => p.step(order.id), /stopped after recording/);
    p.ctx.faultPoint = undefined;
    const first = intentOf(await stored(p.kv, order.id))!;
    assert.deepEqual(first.consumes, { kind: "nonce", account: minter.address, nonce: 0 });

    // The rotation (docs/live-chains.md "Rotating the minter key"): the admin brings the new key in with an allowance,
    // takes the old key's role and allowance, and the service restarts with the new key, on the same KV.
    const admin = privateKeyToAccount(ANVIL_PRIVATE_KEYS[0]); // deployTestUAssets' admin
    const wallet = createWalletClient({ account: admin, chain: p.evm.client.chain, transport: http(p.anvil.url) });
    const next = privateKeyToAccount(ANVIL_PRIVATE_KEYS[3]);
    for (
      const [functionName, args] of [
        ["configureMinter", [next.address, 10n ** 30n]],
        ["removeMinter", [minter.address]],
      ] as const
    ) {
      const hash = await wallet.writeContract({ address: p.uAssets.uSOL, abi: UASSET_ABI, functionName, args });
      await p.evm.client.waitForTransactionReceipt({ hash, pollingInterval: 10 });
    }
    const rotated = await evmChainAdapters({
      chain: CHAIN,
      state: evmKvState(p.kv),
      urls: [p.anvil.url],
      account: next,
      uAssets: p.uAssets,
      transferAddress: TRANSFER_ADDRESS,
    });
    const chains = p.ctx.chains;
    p.ctx.chains = { ...chains, minter: (c) => c === CHAIN ? rotated.minter : chains.minter(c) };

    // The recorded bytes are sent as they are (the old key's signature): mined, and reverted, the old key having no
    // role any more. At the finality tag the attempt is dead, not the order: it goes back to processing, proof kept.
    await p.step(order.id);
    const receipt = await p.evm.client.waitForTransactionReceipt({ hash: first.txHash as Hex, pollingInterval: 10 });
    assert.equal(receipt.status, "reverted");
    await p.mine(6);
    await p.step(order.id);
    const back = await stored(p.kv, order.id);
    assert.equal(back.status, "processing", JSON.stringify(back.details));
    const dead = back.details.deadIntents ?? [];
    assert.equal(dead.length, 1);
    assert.equal(dead[0].txHash, first.txHash);
    assert.equal(dead[0].proof.kind, "failed");
    assert.match(dead[0].detail, new RegExp(`signed by ${minter.address}, a minter key this service no longer`, "i"));

    // The next step asks the contract (not minted) and signs with the new key; at the finality tag it completes.
    await p.step(order.id);
    const second = intentOf(await stored(p.kv, order.id));
    assert.ok(second);
    assert.deepEqual(second.consumes, { kind: "nonce", account: next.address, nonce: 0 });
    const minted = await p.evm.client.waitForTransactionReceipt({ hash: second.txHash as Hex, pollingInterval: 10 });
    assert.equal(minted.status, "success");
    await p.mine(6);
    await p.step(order.id);
    const done = await stored(p.kv, order.id);
    assert.equal(done.status, "completed", JSON.stringify(done.details));
    assert.equal(done.transactionHash, second.txHash);
    const logs = await p.evm.client.getLogs({
      address: p.uAssets.uSOL,
      event: MINTED_EVENT,
      args: { depositId },
      fromBlock: 0n,
      toBlock: "latest",
    });
    assert.equal(logs.length, 1, "exactly one Minted log for the deposit id");
    assert.equal(await rotated.minter.mintedBy(depositId), second.txHash);
  } finally {
    await p.close();
  }
});

Deno.test("order actor on anvil: a burn is confirmed at the finality tag, not at its confirmations", async () => {
  const p = await anvilPipeline({ slotsInAnEpoch: 32 }); // safe = latest - 32, as on anvil by default
  try {
    const sender = holder.address.toLowerCase();
    assert.ok((await createBurnConfig(p.kv, sender, "sol", SOL_DESTINATION, null)).ok);
    const minterWallet = createWalletClient({
      account: minter,
      chain: p.evm.client.chain,
      transport: http(p.anvil.url),
    });
    const holderWallet = createWalletClient({
      account: holder,
      chain: p.evm.client.chain,
      transport: http(p.anvil.url),
    });
    const amount = 2n * 10n ** 18n;
    const funded = await minterWallet.writeContract({
      address: p.uAssets.uSOL,
      abi: UASSET_ABI,
      functionName: "mint",
      args: [holder.address, amount, keccak256(toHex("evm-order-actor-test:fund"))],
    });
    await p.evm.client.waitForTransactionReceipt({ hash: funded, pollingInterval: 10 });
    const hash = await holderWallet.writeContract({
      address: p.uAssets.uSOL,
      abi: UASSET_ABI,
      functionName: "transfer",
      args: [TRANSFER_ADDRESS, amount],
    });
    await p.evm.client.waitForTransactionReceipt({ hash, pollingInterval: 10 });
    await watchOnce(p.ctx, CHAIN, "test", 60_000);
    const [id] = await listOrderIdsByStatus(p.kv, "pending");
    assert.ok(id, "the watcher recorded the burn");

    // Five blocks deep: more than Base's 2 confirmations, but above the safe block.
    await p.mine(4);
    const shallow = await p.evm.reader.txStatus(hash);
    assert.ok(shallow.state === "included" && shallow.confirmations === 5, JSON.stringify(shallow));
    assert.equal(shallow.final, false);
    await p.step(id);
    assert.equal((await stored(p.kv, id)).status, "pending", "a burn 5 blocks deep is not confirmed");

    // 65 blocks deep: at or below the safe block, and the block there is the receipt's.
    await p.mine(60);
    const deep = await p.evm.reader.txStatus(hash);
    assert.ok(deep.state === "included" && deep.final === true, JSON.stringify(deep));
    await p.step(id);
    assert.equal((await stored(p.kv, id)).status, "processing");
  } finally {
    await p.close();
  }
});

Deno.test("order actor: errors that persist raise one persistent_errors alert; a step that works resets the count (sim chains)", async () => {
  // The destination chain is simulated here: its RPC can be made to fail every call.
  const p = await anvilPipeline();
  try {
    const order = await processingMint(p.kv, "persistent", "world");
    const world = simChains(p.kv).ledger("world");
    await world.setFaults({ rpcErrorRate: 1 });
    for (let i = 1; i < PERSISTENT_ERRORS_ALERT_AFTER; i++) await p.step(order.id);
    const before = await stored(p.kv, order.id);
    assert.equal(before.details.transientErrors, PERSISTENT_ERRORS_ALERT_AFTER - 1);
    assert.equal(await getAlert(p.kv, "persistent_errors", order.id), null, "not before the threshold");
    await p.step(order.id);
    const alert = await getAlert(p.kv, "persistent_errors", order.id);
    assert.ok(alert, "raised at the threshold");
    assert.match(alert.message, /injected RPC error/);
    assert.ok(p.logs.some((l) => l.includes(order.id) && /errors in a row/.test(l)), "and logged");
    for (let i = 0; i < 5; i++) await p.step(order.id);
    assert.equal((await getAlert(p.kv, "persistent_errors", order.id))!.count, 1, "raised once per streak");

    await world.setFaults({ rpcErrorRate: 0 });
    await p.step(order.id);
    const moved = await stored(p.kv, order.id);
    assert.equal(moved.status, "minting");
    assert.equal(moved.details.transientErrors, undefined, "the streak ended");
    assert.match(String(moved.details.lastTransientError), /injected RPC error/, "the last error stays on record");
  } finally {
    await p.close();
  }
});

Deno.test("order actor on anvil: a low minter allowance is alerted; a mint above it waits with its reason until the admin tops it up", async () => {
  const p = await anvilPipeline();
  try {
    const admin = privateKeyToAccount(ANVIL_PRIVATE_KEYS[0]); // deployTestUAssets' admin
    const wallet = createWalletClient({ account: admin, chain: p.evm.client.chain, transport: http(p.anvil.url) });
    const configure = async (allowance: bigint) => {
      const hash = await wallet.writeContract({
        address: p.uAssets.uSOL,
        abi: UASSET_ABI,
        functionName: "configureMinter",
        args: [minter.address, allowance],
      });
      await p.evm.client.waitForTransactionReceipt({ hash, pollingInterval: 10 });
    };
    const first = await processingMint(p.kv, "allowance-1");
    const amountWei = nativeToWei("sol", BigInt(first.amount));
    // Room for one mint and a tenth: the first leaves 1/11 of what the admin set, below the default 20 %.
    await configure(amountWei + amountWei / 10n);
    const subject = allowanceSubject(CHAIN, "uSOL");

    await p.step(first.id);
    assert.equal((await stored(p.kv, first.id)).status, "minting");
    const low = await getAlert(p.kv, "minter_allowance_low", subject);
    assert.ok(low, "raised when the mint is recorded, before mints start to wait");
    assert.match(low.message, /below 20% of the/);
    for (let i = 0; i < 20 && (await stored(p.kv, first.id)).status !== "completed"; i++) {
      await p.mine(5);
      await p.step(first.id);
    }
    assert.equal((await stored(p.kv, first.id)).status, "completed");

    // The next mint is above what is left: refused by the contract, the order waits with the reason, never fails.
    const second = await processingMint(p.kv, "allowance-2");
    await p.step(second.id);
    const waiting = await stored(p.kv, second.id);
    assert.equal(waiting.status, "processing");
    assert.match(waiting.details.lastTransientError ?? "", /above the minter's allowance of \d+ wei left/);
    assert.equal(intentOf(waiting), undefined, "nothing signed was recorded");

    // The admin tops it up from its cold key: the order goes through and the alert clears itself.
    await configure(amountWei * 100n);
    await p.step(second.id);
    assert.equal((await stored(p.kv, second.id)).status, "minting");
    assert.equal(await getAlert(p.kv, "minter_allowance_low", subject), null, "cleared once above the threshold");
    for (let i = 0; i < 20 && (await stored(p.kv, second.id)).status !== "completed"; i++) {
      await p.mine(5);
      await p.step(second.id);
    }
    assert.equal((await stored(p.kv, second.id)).status, "completed");
    const left = await p.evm.client.readContract({
      address: p.uAssets.uSOL,
      abi: UASSET_ABI,
      functionName: "minterAllowance",
      args: [minter.address],
    });
    assert.equal(left, amountWei * 99n, "each mint spent its amount");
  } finally {
    await p.close();
  }
});
