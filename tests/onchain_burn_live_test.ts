/**
 * On-chain burns with live Base on anvil (docs/onchain-burn.md): a sim SOL deposit mints real uSOL, a real transfer of
 * part of it to the transfer address completes a burn order, and the burn tick burns it from the transfer address
 * (key derived from the master mnemonic, gas funded by the operator): `totalSupply()` on anvil ends at minted minus
 * redeemed and the transfer address holds nothing. The transfer address's `prepareTransfer` (refunds) and
 * `prepareBurn` are also driven directly against anvil: balances move, nonces come from the KV counter, and a transfer
 * address without gas or without the uAssets signs nothing.
 */
import assert from "node:assert/strict";
import { type Address, toHex } from "viem";
import { EVM_PARENT_PATH } from "../chains/derivation.ts";
import { Deriver } from "../chains/derivation.ts";
import { evmClient, evmUAssetSender, signerAccount, TRANSFER_ADDRESS_INDEX } from "../chains/evm/index.ts";
import { Signer } from "../chains/signer.ts";
import { TRANSFER_ADDRESS_PATH } from "../chains/transfer_address.ts";
import { TransferAddressUnfundedError, UAssetBalanceShortError } from "../chains/uasset_errors.ts";
import { DEVNET_CHAIN_ID } from "../config/chain_mode.ts";
import { UASSET_ABI } from "../contracts/uasset.ts";
import { addReservations, evmKvState, readNonceCounter } from "../kv/chain_state.ts";
import { type BurnBatch, listBurnBatches, listBurnsDue } from "../kv/onchain_burns.ts";
import { openKv } from "../kv/open.ts";
import { anvilRpc } from "./support/anvil.ts";
import { TEST_MNEMONIC } from "./support/deploy.ts";
import { holder, type LiveBase, liveBase } from "./support/live_base.ts";
import { FAST_PIPELINE, sim, terminal, waitForOrders } from "./support/pipeline.ts";
import { call, startTestServer, tokenFor } from "./support/server.ts";

const SOL_DESTINATION = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const ETH = 10n ** 18n;

const totalSupply = (live: LiveBase, asset: "uSOL" | "uXRP") =>
  live.client.readContract({ address: live.uAssets[asset], abi: UASSET_ABI, functionName: "totalSupply" });

const setEth = (live: LiveBase, address: string, wei: bigint) =>
  anvilRpc(live.anvil.url, "anvil_setBalance", [address, toHex(wei)]);

Deno.test("live Base: a completed burn is burned on anvil; totalSupply = minted - redeemed", async () => {
  const live = await liveBase();
  const stopMining = live.mineEvery(60);
  const server = await startTestServer({ ...FAST_PIPELINE, ...live.env() });
  try {
    const kv = server.services.kv;
    const transferAddress = server.services.uAssetTransferAddress;
    // The operator funds the transfer address's gas (it is printed at start).
    await setEth(live, transferAddress, ETH);
    const token = await tokenFor(server, holder.address);
    const created = await call(server, "POST", "/mint/wallets", {
      token,
      body: { chain: "sol", destinationChain: "base" },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await sim(server, "deposits", { chain: "sol", address: created.body.data.address, amount: "3000000000" });
    const [mint] = await waitForOrders(server, token, (o) => o.length === 1 && terminal(o[0]), { timeoutMs: 20_000 });
    assert.equal(mint.status, "completed", JSON.stringify(mint));
    const minted = 3n * ETH;
    assert.equal(await totalSupply(live, "uSOL"), minted);

    const configured = await call(server, "POST", "/burn/wallets", {
      token,
      body: { destinationChain: "sol", destinationAddress: SOL_DESTINATION },
    });
    assert.equal(configured.status, 201);
    const redeemed = 1_250_000_000_000_000_007n; // 1.25 SOL and 7 wei below a lamport: all of it is burned
    await live.transfer("uSOL", transferAddress, redeemed);
    const orders = await waitForOrders(server, token, (o) => o.length === 2 && o.every(terminal), {
      timeoutMs: 20_000,
    });
    assert.ok(orders.every((o) => o.status === "completed"), JSON.stringify(orders));
    const burnOrder = orders.find((o) => o.type === "burn");

    let batch: BurnBatch | undefined;
    const deadline = Date.now() + 20_000;
    while (batch?.status !== "burned") {
      if (Date.now() > deadline) throw new Error(`not burned: ${JSON.stringify(batch)}`);
      await new Promise((r) => setTimeout(r, 50));
      [batch] = await listBurnBatches(kv, "base", 10);
    }
    assert.deepEqual(batch.orders, [{ orderId: burnOrder.id, amountWei: redeemed.toString() }]);
    assert.equal(batch.attempts.length, 1);
    assert.deepEqual(await listBurnsDue(kv), []);
    const receipt = await live.client.getTransactionReceipt({ hash: batch.burnedTxHash as `0x${string}` });
    assert.equal(receipt.status, "success");
    assert.equal(receipt.from.toLowerCase(), transferAddress.toLowerCase(), "sent by the transfer address");
    assert.equal(receipt.to?.toLowerCase(), live.uAssets.uSOL.toLowerCase());

    assert.equal(await totalSupply(live, "uSOL"), minted - redeemed, "totalSupply = minted - redeemed");
    assert.equal(await live.balanceOf("uSOL", transferAddress), 0n);
    assert.equal(await live.balanceOf("uSOL", holder.address), minted - redeemed);
    assert.equal(await live.client.getTransactionCount({ address: transferAddress as Address }), 1, "one burn sent");
  } finally {
    await server.close();
    await stopMining();
    await live.close();
  }
});

Deno.test("live Base: the transfer address's prepareTransfer and prepareBurn move real balances on anvil", async () => {
  const live = await liveBase();
  const kv = await openKv(`${live.dir}/kv.sqlite3`);
  try {
    const signer = Signer.fromMnemonic(TEST_MNEMONIC);
    const client = evmClient({ chain: "base", urls: [live.anvil.url], chainId: DEVNET_CHAIN_ID });
    const sender = evmUAssetSender({
      chain: "base",
      state: evmKvState(kv),
      client,
      account: signerAccount(signer, "base", TRANSFER_ADDRESS_INDEX),
      uAssets: live.uAssets,
      chainId: DEVNET_CHAIN_ID,
    });
    const derived = Deriver.fromMnemonic(TEST_MNEMONIC).evmAddress(TRANSFER_ADDRESS_PATH);
    assert.equal(TRANSFER_ADDRESS_PATH, `${EVM_PARENT_PATH}/${TRANSFER_ADDRESS_INDEX}`);
    assert.equal(sender.address, derived, "the transfer address of the master mnemonic");
    await live.fund("uXRP", sender.address as Address, 10n * ETH);
    const refund = { asset: "uXRP" as const, to: holder.address, amount: 4n * ETH, refundId: "held-1" };

    // No gas yet: nothing is signed for recording.
    await assert.rejects(sender.prepareTransfer(refund), TransferAddressUnfundedError);
    await setEth(live, sender.address, ETH);
    await assert.rejects(sender.prepareTransfer({ ...refund, amount: 11n * ETH }), UAssetBalanceShortError);
    await assert.rejects(sender.prepareTransfer({ ...refund, to: "not-an-address" }), /bad refund recipient/);

    const holderBefore = await live.balanceOf("uXRP", holder.address);
    const transfer = await sender.prepareTransfer(refund);
    assert.deepEqual(transfer.consumes, { kind: "nonce", account: sender.address, nonce: 0 });
    assert.ok((await addReservations(kv.atomic(), transfer).commit()).ok, "recorded with its nonce reservation");
    assert.equal((await readNonceCounter(kv, "base", sender.address)).next, 1n);
    await sender.broadcast(transfer);
    await sender.broadcast(transfer); // the same bytes again: harmless
    await live.mine(1);
    const r1 = await live.client.getTransactionReceipt({ hash: transfer.txHash as `0x${string}` });
    assert.equal(r1.status, "success");
    assert.equal(await live.balanceOf("uXRP", sender.address), 6n * ETH);
    assert.equal(await live.balanceOf("uXRP", holder.address), holderBefore + 4n * ETH);

    const supply = await totalSupply(live, "uXRP");
    const burn = await sender.prepareBurn({ asset: "uXRP", amount: 6n * ETH, batchId: "b1" });
    assert.deepEqual(burn.consumes, { kind: "nonce", account: sender.address, nonce: 1 });
    assert.ok((await addReservations(kv.atomic(), burn).commit()).ok);
    await sender.broadcast(burn);
    await live.mine(1);
    const r2 = await live.client.getTransactionReceipt({ hash: burn.txHash as `0x${string}` });
    assert.equal(r2.status, "success");
    console.log(`gas used on anvil: transfer ${r1.gasUsed}, burn ${r2.gasUsed}`);
    assert.equal(await live.balanceOf("uXRP", sender.address), 0n);
    assert.equal(await totalSupply(live, "uXRP"), supply - 6n * ETH, "burned: the supply went down");
  } finally {
    kv.close();
    await live.close();
  }
});
