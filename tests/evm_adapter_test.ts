/**
 * The EVM adapter (chains/evm) against a real anvil node: the five uAssets deployed from contracts/, mints through the
 * write-ahead path (prepare, reserve + commit, broadcast), status through inclusion, confirmations and a reorg, log
 * scans across more blocks than one `eth_getLogs` may span, RPC failover, the chain id check, and fee-bumped
 * replacement of a stuck mint.
 */
import { waitUntil } from "./support/chain_facts.ts";
import { chainPlan } from "../config/chain_mode.ts";
import assert from "node:assert/strict";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  keccak256,
  parseEther,
  parseTransaction,
  toHex,
  zeroAddress,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type PreparedTx, TransientChainError } from "../chains/adapter.ts";
import { EVM, NATIVE, NATIVE_CHAINS, type UAsset } from "../chains/catalog.ts";
import {
  assertChainId,
  evmChainAdapters,
  evmClient,
  evmMinter,
  evmReader,
  MAX_TX_VERSIONS,
  type Replacement,
} from "../chains/evm/index.ts";
import { getAlert } from "../kv/alerts.ts";
import type { Chains } from "../chains/adapter.ts";
import { ReplacementMismatchError } from "../chains/effects.ts";
import { followSentTx } from "../actors/sent_tx.ts";
import { ORDER_POLICY } from "../actors/follow_up.ts";
import { sentTxOf } from "../model/sent_tx.ts";
import { buildChains } from "../config/registry.ts";
import { uAssetsEnvValue } from "../chains/evm/deploy.ts";
import { loadEvmConfig } from "../config/evm.ts";
import { UASSET_ABI, UASSET_BYTECODE } from "../contracts/uasset.ts";
import { openKv } from "../kv/open.ts";
import { addReservations, evmKvState, replacementsKey } from "../kv/chain_state.ts";
import { ANVIL_PRIVATE_KEYS, anvilRpc, closedPortUrl, startAnvil } from "./support/anvil.ts";

const CHAIN = "base" as const;
const CHAIN_ID = EVM[CHAIN].chainId;

const admin = privateKeyToAccount(ANVIL_PRIVATE_KEYS[0]);
const minterAccount = privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]);
const holder = privateKeyToAccount(ANVIL_PRIVATE_KEYS[2]);
const other = privateKeyToAccount(ANVIL_PRIVATE_KEYS[3]);
const TRANSFER_ADDRESS = privateKeyToAccount(ANVIL_PRIVATE_KEYS[5]).address;

const SUPPLY_CAP = parseEther("1000000000");

const depositId = (label: string) => keccak256(toHex(`evm-adapter-test:${label}`));

Deno.test("EVM adapter on anvil (real node)", async (t) => {
  const anvil = await startAnvil({ chainId: CHAIN_ID });
  const dir = await Deno.makeTempDir({ prefix: "evm-adapter-test-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  try {
    const uAssets = await deployUAssets(anvil.url);
    const rpcCalls: string[] = [];
    const { client, reader, minter } = await evmChainAdapters({
      chain: CHAIN,
      state: evmKvState(kv),
      urls: [anvil.url],
      account: minterAccount,
      uAssets,
      transferAddress: TRANSFER_ADDRESS,
      maxRange: 3,
      onRpc: ({ method }) => rpcCalls.push(method),
      minter: { replaceAfterMs: 60_000 },
    });
    const mine = (blocks = 1) => anvilRpc(anvil.url, "anvil_mine", [toHex(blocks)]);
    // Automine answers eth_sendRawTransaction before the block is sealed: on a loaded machine the first look can still
    // find the transaction pending.
    const minedStatus = (hash: string) =>
      waitUntil(`${hash} mined`, async () => {
        const s = await reader.txStatus(hash);
        return s.state === "included" ? s : null;
      });
    const holderWallet = createWalletClient({ account: holder, chain: client.chain, transport: http(anvil.url) });
    const balanceOf = (asset: UAsset, who: Address) =>
      client.readContract({ address: uAssets[asset], abi: UASSET_ABI, functionName: "balanceOf", args: [who] });

    /** What the order actor does: record the intent with the reservation in one atomic, then send. */
    const commitIntent = async (tx: PreparedTx) => {
      const atomic = kv.atomic().set(["test_intent", tx.txHash], tx.raw);
      addReservations(atomic, tx);
      return (await atomic.commit()).ok;
    };

    await t.step("assertChainId accepts the catalog's id and refuses another, naming both", async () => {
      await assertChainId(client, CHAIN_ID, CHAIN);
      await assert.rejects(
        () => assertChainId(client, EVM.arbitrum.chainId, "arbitrum"),
        (err: Error) => {
          assert.match(err.message, /arbitrum/);
          assert.match(err.message, new RegExp(`${CHAIN_ID}`));
          assert.match(err.message, new RegExp(`${EVM.arbitrum.chainId}`));
          return true;
        },
      );
      await assert.rejects(
        () =>
          evmChainAdapters({
            chain: "arbitrum",
            state: evmKvState(kv),
            urls: [anvil.url],
            account: minterAccount,
            uAssets,
            transferAddress: TRANSFER_ADDRESS,
          }),
        /chain id/,
      );
    });

    const firstDeposit = depositId("first");
    const firstAmount = 1_234_567_890_000_000_000n;
    let firstHash = "";

    await t.step(
      "prepare, reserve + commit, broadcast a mint; status through inclusion and confirmations",
      async () => {
        const before = await client.getBlockNumber();
        const tx = await minter.prepareMint({
          depositId: firstDeposit,
          to: other.address,
          asset: "uSOL",
          amountWei: firstAmount,
        });
        assert.equal(tx.txHash, keccak256(tx.raw as Hex));
        assert.deepEqual(await reader.txStatus(tx.txHash), { state: "unknown" }, "prepare must not broadcast");
        assert.equal(await client.getBlockNumber(), before);
        assert.ok(await commitIntent(tx));
        await minter.broadcast(tx);
        firstHash = tx.txHash;
        const included = await minedStatus(tx.txHash);
        assert.equal(included.state, "included");
        if (included.state !== "included") return;
        assert.equal(included.success, true);
        assert.equal(included.confirmations, 1);
        assert.equal(included.txHash, undefined);
        await mine(2);
        const later = await reader.txStatus(tx.txHash);
        assert.equal(later.state === "included" && later.confirmations, 3);
        assert.equal(await balanceOf("uSOL", other.address), firstAmount);
        // Re-broadcasting the very same bytes after it landed is harmless (the pipeline does it after a crash).
        await minter.broadcast(tx);
        assert.equal(await balanceOf("uSOL", other.address), firstAmount);
        const stored = await kv.get<bigint>(["evm_nonce", CHAIN, minterAccount.address.toLowerCase()]);
        assert.equal(stored.value, BigInt(parseTransaction(tx.raw as Hex).nonce!) + 1n);
      },
    );

    await t.step("two preparations without a commit share a nonce; only the committed one is ever sent", async () => {
      const req = {
        depositId: depositId("race"),
        to: other.address,
        asset: "uXRP" as const,
        amountWei: 5n * 10n ** 18n,
      };
      const a = await minter.prepareMint(req);
      const b = await minter.prepareMint({ ...req, amountWei: req.amountWei + 1n });
      assert.notEqual(a.txHash, b.txHash);
      assert.equal(parseTransaction(a.raw as Hex).nonce, parseTransaction(b.raw as Hex).nonce);
      assert.ok(await commitIntent(b), "the first commit wins");
      assert.equal(await commitIntent(a), false, "the loser's reservation check fails: it is never sent");
      await minter.broadcast(b);
      const status = await reader.txStatus(b.txHash);
      assert.equal(status.state === "included" && status.success, true);
      assert.deepEqual(await reader.txStatus(a.txHash), { state: "unknown" });
      assert.equal(await balanceOf("uXRP", other.address), req.amountWei + 1n);
      // The next preparation takes the next nonce.
      const c = await minter.prepareMint({ ...req, depositId: depositId("race-next") });
      assert.equal(parseTransaction(c.raw as Hex).nonce, parseTransaction(b.raw as Hex).nonce! + 1);
    });

    await t.step("mintedBy finds the minting transaction; null for a deposit never minted", async () => {
      assert.equal(await minter.mintedBy(firstDeposit), firstHash);
      assert.equal(await minter.mintedBy(depositId("never")), null);
      // Without the KV note (another process, a lost note) it checks all five contracts and reads the Minted log.
      const otherKv = await openKv(`${dir}/other.sqlite3`);
      const fresh = evmMinter({
        chain: CHAIN,
        state: evmKvState(otherKv),
        client,
        account: minterAccount,
        uAssets,
        chainId: CHAIN_ID,
      });
      assert.equal(await fresh.mintedBy(firstDeposit), firstHash);
      assert.equal(await fresh.mintedBy(depositId("never")), null);
      otherKv.close();
    });

    await t.step(
      "a second mint of a deposit id reverts on chain: status success:false, and prepare refuses it",
      async () => {
        const id = depositId("twice");
        const req = { depositId: id, to: other.address, asset: "uSUI" as const, amountWei: 10n ** 18n };
        // Both signed before either lands, as two buggy attempts would be; the contract is the last line.
        const first = await minter.prepareMint(req);
        assert.ok(await commitIntent(first));
        const second = await minter.prepareMint(req);
        assert.ok(await commitIntent(second));
        await minter.broadcast(first);
        await minter.broadcast(second);
        const s1 = await reader.txStatus(first.txHash);
        const s2 = await reader.txStatus(second.txHash);
        assert.equal(s1.state === "included" && s1.success, true);
        assert.equal(s2.state, "included");
        assert.equal(s2.state === "included" && s2.success, false);
        assert.equal(await balanceOf("uSUI", other.address), 10n ** 18n);
        assert.equal(await minter.mintedBy(id), first.txHash);
        await assert.rejects(
          () => minter.prepareMint(req),
          (err: Error) => !(err instanceof TransientChainError) && /DepositAlreadyMinted|revert/i.test(err.message),
        );
      },
    );

    await t.step("scan finds uAsset transfers to the transfer address across ranges larger than maxRange", async () => {
      // Fund the holder with every uAsset (the minter key, directly), then send some to the transfer address.
      const minterWallet = createWalletClient({
        account: minterAccount,
        chain: client.chain,
        transport: http(anvil.url),
      });
      for (const chain of NATIVE_CHAINS) {
        const asset = NATIVE[chain].uAsset.symbol;
        const hash = await minterWallet.writeContract({
          address: uAssets[asset],
          abi: UASSET_ABI,
          functionName: "mint",
          args: [holder.address, 100n * 10n ** 18n, depositId(`fund-${asset}`)],
        });
        await client.waitForTransactionReceipt({ hash, pollingInterval: 10 });
      }
      // The KV nonce must follow the key's use outside the pipeline: the next prepare reads the node's count.
      const from = Number(await client.getBlockNumber()) + 1;
      const send = (asset: UAsset, to: Address, amount: bigint) =>
        holderWallet.writeContract({
          address: uAssets[asset],
          abi: UASSET_ABI,
          functionName: "transfer",
          args: [to, amount],
        });
      const expected: { asset: UAsset; amount: bigint; hash: string }[] = [];
      expected.push({ asset: "uSOL", amount: 11n, hash: await send("uSOL", TRANSFER_ADDRESS, 11n) });
      await send("uSOL", other.address, 99n); // not to us
      await mine(4);
      // Two transfers to us and one elsewhere in one block: distinct log indexes.
      await anvilRpc(anvil.url, "evm_setAutomine", [false]);
      const h1 = await send("uDOGE", TRANSFER_ADDRESS, 22n);
      const h2 = await send("uZEC", other.address, 98n);
      const h3 = await send("uXRP", TRANSFER_ADDRESS, 33n);
      await mine(1);
      await anvilRpc(anvil.url, "evm_setAutomine", [true]);
      for (const h of [h1, h2, h3]) await client.waitForTransactionReceipt({ hash: h, pollingInterval: 10 });
      expected.push({ asset: "uDOGE", amount: 22n, hash: h1 }, { asset: "uXRP", amount: 33n, hash: h3 });
      await mine(5);
      expected.push({ asset: "uSUI", amount: 44n, hash: await send("uSUI", TRANSFER_ADDRESS, 44n) });
      // The same contract deployed outside our five, sending to the transfer address, is not ours to see.
      const [stranger] = await deployUAssets(anvil.url, 1, holder.address);
      await holderWallet.writeContract({
        address: stranger,
        abi: UASSET_ABI,
        functionName: "mint",
        args: [holder.address, 1000n, depositId("stranger")],
      });
      await holderWallet.writeContract({
        address: stranger,
        abi: UASSET_ABI,
        functionName: "transfer",
        args: [TRANSFER_ADDRESS, 55n],
      });
      await mine(3);
      const to = Number(await client.getBlockNumber());
      assert.ok(to - from + 1 > 3 * 3, "the range spans several getLogs chunks");

      rpcCalls.length = 0;
      const blocks = await reader.scan(from, to);
      const calls = rpcCalls.length;
      const scanned = to - from + 1;
      console.log(
        `scan ${from}..${to}: ${scanned} blocks, maxRange 3, ${blocks.length} returned, ${calls} RPC calls ` +
          `(${rpcCalls.filter((m) => m === "eth_getLogs").length} eth_getLogs), ` +
          `${(calls / scanned).toFixed(3)} RPC calls per scanned block`,
      );

      // A watcher tick with a provider-sized range: one eth_getLogs, the last header, one header per block with ours.
      const wide = evmReader({
        chain: CHAIN,
        client,
        uAssets,
        transferAddress: TRANSFER_ADDRESS,
        maxRange: 1_000,
      });
      rpcCalls.length = 0;
      assert.deepEqual(await wide.scan(from, to), blocks);
      console.log(
        `scan ${from}..${to}: maxRange 1000, ${rpcCalls.length} RPC calls, ` +
          `${(rpcCalls.length / scanned).toFixed(3)} RPC calls per scanned block`,
      );
      rpcCalls.length = 0;
      // The six blocks after the uSUI transfer hold only the stranger's transfer to the transfer address.
      const quiet = await wide.scan(to - 5, to);
      console.log(`scan of 6 blocks with no transfer to us: ${rpcCalls.length} RPC calls`);
      // Only the checkpoints 1, 2 and 4 blocks below the end (ancestors the watcher remembers), and the end.
      assert.deepEqual(quiet.map((b) => [b.number, b.transfers.length]), [[to - 4, 0], [to - 2, 0], [to - 1, 0], [
        to,
        0,
      ]]);
      // `latest` (here the range's last block), eth_getLogs, the three checkpoints, and the last block again to pin
      // the logs and the checkpoints to it.
      assert.deepEqual(rpcCalls, ["eth_getBlockByNumber", "eth_getLogs", ...Array(4).fill("eth_getBlockByNumber")]);
      // A tick that follows the tip scans a block or two: no checkpoint, or one.
      rpcCalls.length = 0;
      assert.deepEqual((await wide.scan(to, to)).map((b) => b.number), [to]);
      assert.deepEqual(rpcCalls, ["eth_getBlockByNumber", "eth_getLogs", "eth_getBlockByNumber"]);

      const numbers = blocks.map((b) => b.number);
      assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b));
      assert.equal(blocks.at(-1)!.number, to, "the last block is always returned");
      assert.equal(blocks.at(-1)!.hash, await reader.blockHash(to));
      const toBlock = await client.getBlock({ blockNumber: BigInt(to) });
      assert.equal(blocks.at(-1)!.parentHash, toBlock.parentHash);
      const transfers = blocks.flatMap((b) => b.transfers.map((tr) => ({ ...tr, block: b })));
      assert.equal(transfers.length, expected.length);
      for (const e of expected) {
        const found = transfers.find((tr) => tr.txHash === e.hash.toLowerCase());
        assert.ok(found, `transfer ${e.asset} ${e.hash}`);
        assert.equal(found.asset, e.asset);
        assert.equal(found.amount, e.amount);
        assert.equal(found.to, TRANSFER_ADDRESS.toLowerCase());
        assert.equal(found.from, holder.address.toLowerCase());
        const receipt = await client.getTransactionReceipt({ hash: e.hash as Hex });
        assert.equal(found.index, 0, "the transfer's position among its transaction's transfers to us");
        assert.equal(found.block.number, Number(receipt.blockNumber));
        assert.equal(found.block.hash, receipt.blockHash);
        const header = await client.getBlock({ blockNumber: receipt.blockNumber });
        assert.equal(found.block.parentHash, header.parentHash);
      }
      const shared = transfers.filter((tr) => tr.txHash === h1.toLowerCase() || tr.txHash === h3.toLowerCase());
      assert.equal(shared[0].block.number, shared[1].block.number);
      assert.deepEqual(shared.map((s) => s.index), [0, 0], "identity does not depend on the block's other logs");
      // Blocks without a transfer to us cost nothing beyond their share of eth_getLogs (plus, per scan, the node's
      // tip and the last block read again to pin the logs to it).
      assert.ok(calls <= Math.ceil(scanned / 3) + blocks.length + 2, `${calls} calls`);
      assert.deepEqual(await reader.scan(to + 1, to), []);
      await assert.rejects(() => reader.scan(to + 1, to + 5), TransientChainError);
    });

    await t.step("a transfer re-mined at another block position after a reorg keeps its identity", async () => {
      // Signed once; mined first alone, then (after a revert) behind another transaction, so its block-level log
      // index moves. A dedupe keyed on that log index would see two transfers and pay twice.
      const request = await holderWallet.prepareTransactionRequest({
        to: uAssets.uSOL,
        data: encodeFunctionData({ abi: UASSET_ABI, functionName: "transfer", args: [TRANSFER_ADDRESS, 5n] }),
      });
      const raw = await holderWallet.signTransaction(request);
      const hash = keccak256(raw);
      const snapshot = await anvilRpc<string>(anvil.url, "evm_snapshot");
      await anvilRpc(anvil.url, "eth_sendRawTransaction", [raw]);
      const first = await client.waitForTransactionReceipt({ hash, pollingInterval: 10 });
      const seenFirst = (await reader.scan(Number(first.blockNumber), Number(first.blockNumber)))
        .flatMap((b) => b.transfers).find((tr) => tr.txHash === hash);
      await anvilRpc(anvil.url, "evm_revert", [snapshot]);
      await anvilRpc(anvil.url, "evm_setAutomine", [false]);
      const shift = await createWalletClient({ account: other, chain: client.chain, transport: http(anvil.url) })
        .writeContract({
          address: uAssets.uXRP,
          abi: UASSET_ABI,
          functionName: "approve",
          args: [holder.address, 1n],
          // Paying far more, so the node orders it first in the block and its Approval log comes first.
          maxFeePerGas: 10n ** 12n,
          maxPriorityFeePerGas: 5n * 10n ** 11n,
        });
      await anvilRpc(anvil.url, "eth_sendRawTransaction", [raw]);
      await mine(1);
      await anvilRpc(anvil.url, "evm_setAutomine", [true]);
      await client.waitForTransactionReceipt({ hash: shift, pollingInterval: 10 });
      const second = await client.waitForTransactionReceipt({ hash, pollingInterval: 10 });
      assert.notEqual(second.logs[0].logIndex, first.logs[0].logIndex, "the block-level log index moved");
      const seenSecond = (await reader.scan(Number(second.blockNumber), Number(second.blockNumber)))
        .flatMap((b) => b.transfers).find((tr) => tr.txHash === hash);
      assert.ok(seenFirst && seenSecond);
      assert.equal(seenSecond.index, seenFirst.index, "same (txHash, index) identity before and after the reorg");
    });

    await t.step("a reorg changes blockHash, drops the mint to unknown, and the same bytes land again", async () => {
      const snapshot = await anvilRpc<string>(anvil.url, "evm_snapshot");
      const id = depositId("reorged");
      const tx = await minter.prepareMint({ depositId: id, to: other.address, asset: "uZEC", amountWei: 7n });
      // The minter key was used outside the pipeline (funding above): the nonce follows the node's count.
      assert.equal(
        parseTransaction(tx.raw as Hex).nonce,
        await client.getTransactionCount({ address: minterAccount.address, blockTag: "pending" }),
      );
      assert.ok(await commitIntent(tx));
      await minter.broadcast(tx);
      const status = await minedStatus(tx.txHash);
      assert.equal(status.state, "included");
      const n = status.state === "included" ? status.blockNumber : -1;
      const oldHash = await reader.blockHash(n);
      await anvilRpc(anvil.url, "evm_revert", [snapshot]);
      // A different history at the same heights.
      const otherWallet = createWalletClient({ account: other, chain: client.chain, transport: http(anvil.url) });
      await otherWallet.sendTransaction({ to: zeroAddress, value: parseEther("0.001") });
      await mine(1);
      const newHash = await reader.blockHash(n);
      assert.ok(newHash !== null && newHash !== oldHash, "the block at the same height changed");
      assert.deepEqual(await reader.txStatus(tx.txHash), { state: "unknown" });
      assert.equal(await minter.mintedBy(id), null);
      // Recovery sends the recorded bytes again; it never signs a second mint.
      await minter.broadcast(tx);
      const again = await minedStatus(tx.txHash);
      assert.equal(again.state === "included" && again.success, true);
      assert.equal(await minter.mintedBy(id), tx.txHash);
    });

    await t.step(
      "a nonce taken by a transaction that is not ours: broadcast is transient, status unknown",
      async () => {
        const tx = await minter.prepareMint({
          depositId: depositId("usurped"),
          to: other.address,
          asset: "uSOL",
          amountWei: 9n,
        });
        assert.ok(await commitIntent(tx));
        const nonce = parseTransaction(tx.raw as Hex).nonce!;
        const minterWallet = createWalletClient({
          account: minterAccount,
          chain: client.chain,
          transport: http(anvil.url),
        });
        const foreign = await minterWallet.sendTransaction({ to: zeroAddress, value: 1n, nonce });
        await client.waitForTransactionReceipt({ hash: foreign, pollingInterval: 10 });
        await assert.rejects(() => minter.broadcast(tx), (err: Error) => {
          assert.ok(err instanceof TransientChainError);
          assert.match(err.message, /not ours/);
          return true;
        });
        assert.deepEqual(await reader.txStatus(tx.txHash), { state: "unknown" });
        const next = await minter.prepareMint({
          depositId: depositId("after"),
          to: other.address,
          asset: "uSOL",
          amountWei: 1n,
        });
        assert.equal(parseTransaction(next.raw as Hex).nonce, nonce + 1);
      },
    );

    await t.step("RPC failover: a dead URL first still works; all dead is a TransientChainError", async () => {
      const seen: string[] = [];
      const dead = closedPortUrl();
      const failover = evmClient({ chain: CHAIN, urls: [dead, anvil.url], onRpc: ({ url }) => seen.push(url) });
      await assertChainId(failover, CHAIN_ID, CHAIN);
      const r = evmReader({
        chain: CHAIN,
        client: failover,
        uAssets,
        transferAddress: TRANSFER_ADDRESS,
        maxRange: 100,
      });
      const tip = await r.tip();
      assert.equal(tip.number, Number(await client.getBlockNumber()));
      assert.ok(seen.includes(dead) && seen.includes(anvil.url), "the dead URL was tried, then the live one");
      const allDead = evmClient({ chain: CHAIN, urls: [dead, closedPortUrl()], timeoutMs: 2_000 });
      const d = evmReader({ chain: CHAIN, client: allDead, uAssets, transferAddress: TRANSFER_ADDRESS, maxRange: 100 });
      await assert.rejects(() => d.tip(), TransientChainError);
      await assert.rejects(() => d.scan(1, 2), TransientChainError);
      await assert.rejects(() => d.txStatus(firstHash), TransientChainError);
      const m = evmMinter({
        chain: CHAIN,
        state: evmKvState(kv),
        client: allDead,
        account: minterAccount,
        uAssets,
        chainId: CHAIN_ID,
      });
      await assert.rejects(() => m.mintedBy(firstDeposit), TransientChainError);
      await assert.rejects(
        () => m.prepareMint({ depositId: depositId("dead"), to: other.address, asset: "uSOL", amountWei: 1n }),
        TransientChainError,
      );
      await assert.rejects(() => assertChainId(allDead, CHAIN_ID, CHAIN), TransientChainError);
    });

    await t.step(
      "a stuck mint is replaced at the same nonce with higher fees; exactly one of them is mined",
      async () => {
        let now = 1_000_000;
        const bumping = evmMinter({
          chain: CHAIN,
          state: evmKvState(kv),
          client,
          account: minterAccount,
          uAssets,
          chainId: CHAIN_ID,
          replaceAfterMs: 60_000,
          now: () => now,
        });
        await anvilRpc(anvil.url, "evm_setAutomine", [false]);
        try {
          const id = depositId("stuck");
          const tx = await bumping.prepareMint({ depositId: id, to: other.address, asset: "uDOGE", amountWei: 3n });
          assert.ok(await commitIntent(tx));
          await bumping.broadcast(tx);
          assert.deepEqual(await reader.txStatus(tx.txHash), { state: "pending" });
          // Young: a nudge only re-sends the same bytes.
          await bumping.nudge!(tx, 5_000);
          assert.equal((await kv.get(replacementsKey(CHAIN, tx.txHash))).value, null);
          // The network's fee rises above what the transaction offers (anvil then drops it from its pool)...
          await raiseBaseFee(anvil.url, parseTransaction(tx.raw as Hex).maxFeePerGas! + 1n);
          // ...and it is past the threshold: a replacement, recorded before it is sent.
          await bumping.nudge!(tx, 61_000);
          const recorded = (await kv.get<Replacement[]>(replacementsKey(CHAIN, tx.txHash))).value!;
          assert.equal(recorded.length, 1);
          const original = parseTransaction(tx.raw as Hex);
          const replacement = parseTransaction(recorded[0].raw as Hex);
          assert.equal(replacement.nonce, original.nonce);
          assert.equal(replacement.gas, original.gas);
          assert.equal(replacement.data, original.data);
          assert.ok(replacement.maxFeePerGas! * 1000n >= original.maxFeePerGas! * 1125n);
          assert.ok(replacement.maxPriorityFeePerGas! * 1000n >= original.maxPriorityFeePerGas! * 1125n);
          assert.equal(recorded[0].txHash, keccak256(recorded[0].raw as Hex));
          // Nudged again right away: the replacement is young, so no second one.
          await bumping.nudge!(tx, 62_000);
          assert.equal((await kv.get<Replacement[]>(replacementsKey(CHAIN, tx.txHash))).value!.length, 1);
          assert.deepEqual(await reader.txStatus(tx.txHash), { state: "pending" });
          // Re-broadcasting the recorded original sends the newest version, which the node already has.
          await bumping.broadcast(tx);
          await mine(1);
          const [r0, r1] = await Promise.all(
            [tx.txHash, recorded[0].txHash].map((hash) =>
              client.request({ method: "eth_getTransactionReceipt", params: [hash as Hex] })
            ),
          );
          assert.equal([r0, r1].filter((r) => r !== null).length, 1, "one of the two is mined, never both");
          const minedHash = (r0 ?? r1)!.transactionHash;
          assert.equal(minedHash, recorded[0].txHash, "anvil's pool keeps the better-paying replacement");
          const status = await reader.txStatus(tx.txHash);
          assert.equal(status.state === "included" && status.success, true);
          assert.equal(status.state === "included" ? (status.txHash ?? tx.txHash) : "", minedHash);
          assert.equal(await bumping.mintedBy(id), minedHash);
          assert.equal(await balanceOf("uDOGE", other.address), 3n);
          // A later nudge, long after, finds nothing to replace: the pipeline only nudges pending ones anyway.
          now += 120_000;
          await bumping.broadcast(tx);
          await mine(1);
          const pendingCount = await client.getTransactionCount({
            address: minterAccount.address,
            blockTag: "pending",
          });
          const latestCount = await client.getTransactionCount({ address: minterAccount.address });
          assert.equal(pendingCount, latestCount);
        } finally {
          await anvilRpc(anvil.url, "evm_setAutomine", [true]);
        }
      },
    );
  } finally {
    kv.close();
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("EVM fee bumping on anvil follows the network estimate, under a cap and a version limit", async (t) => {
  const anvil = await startAnvil({ chainId: CHAIN_ID });
  const dir = await Deno.makeTempDir({ prefix: "evm-fees-test-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  try {
    const uAssets = await deployUAssets(anvil.url);
    const { client } = await evmChainAdapters({
      chain: CHAIN,
      state: evmKvState(kv),
      urls: [anvil.url],
      account: minterAccount,
      uAssets,
      transferAddress: TRANSFER_ADDRESS,
    });
    // One clock for the minter: each nudge below is a minute past the last, never a real wait.
    let now = 1_000_000;
    const minterWithCap = (cap: bigint) =>
      evmMinter({
        chain: CHAIN,
        state: evmKvState(kv),
        client,
        account: minterAccount,
        uAssets,
        chainId: CHAIN_ID,
        replaceAfterMs: 60_000,
        maxFeePerGasCap: cap,
        now: () => now,
      });
    const versions = async (tx: PreparedTx) => [
      parseTransaction(tx.raw as Hex),
      ...((await kv.get<Replacement[]>(replacementsKey(CHAIN, tx.txHash))).value ?? []).map((r) =>
        parseTransaction(r.raw as Hex)
      ),
    ];
    /** Prepared, recorded as the order actor does, and sent; automine is off, so it stays pending. */
    const pendingMint = async (minter: ReturnType<typeof minterWithCap>, label: string) => {
      const tx = await minter.prepareMint({
        depositId: depositId(label),
        to: other.address,
        asset: "uSOL",
        amountWei: 1n,
      });
      const atomic = kv.atomic();
      addReservations(atomic, tx);
      assert.ok((await atomic.commit()).ok);
      await minter.broadcast(tx);
      return tx;
    };
    /** A minute later, pending since `pendingFor` minutes: what the order actor calls every block. */
    const nudgeLater = async (minter: ReturnType<typeof minterWithCap>, tx: PreparedTx, pendingFor: number) => {
      now += 60_001;
      await minter.nudge!(tx, pendingFor * 60_001);
    };
    await anvilRpc(anvil.url, "evm_setAutomine", [false]);

    const CAP = 20_000_000_000n; // 20 gwei
    const capped = minterWithCap(CAP);
    const stuck = await pendingMint(capped, "fees-stuck");

    await t.step("a constant network estimate: many nudges past the threshold, no replacement", async () => {
      const estimate = await client.estimateFeesPerGas();
      for (let i = 1; i <= 30; i++) await nudgeLater(capped, stuck, i);
      assert.equal(
        (await kv.get(replacementsKey(CHAIN, stuck.txHash))).value,
        null,
        "offering what the network asks, a pending mint is only rebroadcast",
      );
      assert.deepEqual(await client.estimateFeesPerGas(), estimate, "the estimate really stayed constant");
      const pool = await client.getTransaction({ hash: stuck.txHash as Hex });
      assert.equal(pool.blockNumber, null, "still pending");
    });

    await t.step("a rising estimate: replacements follow it, each at least +12.5 %, never above the cap", async () => {
      let rounds = 0;
      for (;;) {
        const latest = (await versions(stuck)).at(-1)!;
        // The next block's base fee is above what we offer: the block is mined without us, the estimate rises.
        await raiseBaseFee(anvil.url, latest.maxFeePerGas! + 1_000_000_000n);
        const estimate = await client.estimateFeesPerGas();
        const before = (await versions(stuck)).length;
        await nudgeLater(capped, stuck, 40 + rounds);
        const all = await versions(stuck);
        for (const v of all) assert.ok(v.maxFeePerGas! <= CAP, `${v.maxFeePerGas} is above the cap`);
        if (all.length === before) break; // the cap stopped it
        const added = all.at(-1)!;
        assert.equal(all.length, before + 1, "one replacement per nudge");
        assert.equal(added.nonce, latest.nonce);
        assert.ok(added.maxFeePerGas! * 8n >= latest.maxFeePerGas! * 9n, "a replacement the node accepts");
        assert.ok(added.maxPriorityFeePerGas! * 8n >= latest.maxPriorityFeePerGas! * 9n);
        const wanted = estimate.maxFeePerGas > latest.maxFeePerGas! * 9n / 8n
          ? estimate.maxFeePerGas
          : added.maxFeePerGas!;
        assert.equal(added.maxFeePerGas, wanted < CAP ? wanted : CAP, "the estimate, clipped at the cap");
        rounds++;
        assert.ok(rounds < 20, "the cap must stop the bumping");
      }
      assert.ok(rounds >= 2, `the estimate was followed several times (${rounds})`);
      const all = await versions(stuck);
      assert.ok(all.at(-1)!.maxFeePerGas! > CAP - CAP / 8n, "it went as far as the cap allows");
      const alert = await getAlert(kv, "fee_cap_reached", stuck.txHash);
      assert.ok(alert, "an operator is alerted");
      assert.equal(alert.chain, CHAIN);
      assert.match(alert.message, new RegExp(stuck.txHash));
      // Still rising, now above the cap: nothing more is signed, the alert is not raised again, and the node's
      // refusal of a fee below its base fee is a transient wait, not an error.
      for (let i = 0; i < 5; i++) {
        await raiseBaseFee(anvil.url, 2n * CAP + BigInt(i) * 1_000_000_000n);
        await assert.rejects(() => nudgeLater(capped, stuck, 100 + i), TransientChainError);
      }
      assert.equal((await versions(stuck)).length, all.length);
      assert.equal((await getAlert(kv, "fee_cap_reached", stuck.txHash))!.count, 1);
    });

    await t.step("the version list is bounded: past MAX_TX_VERSIONS only the latest is rebroadcast", async () => {
      const unbounded = minterWithCap(10n ** 30n);
      const tx = await pendingMint(unbounded, "fees-limit");
      for (let i = 0; i < MAX_TX_VERSIONS + 5; i++) {
        await raiseBaseFee(anvil.url, (await versions(tx)).at(-1)!.maxFeePerGas! + 1n);
        await nudgeLater(unbounded, tx, 200 + i);
      }
      const stored = (await kv.get<Replacement[]>(replacementsKey(CHAIN, tx.txHash))).value!;
      assert.equal(stored.length + 1, MAX_TX_VERSIONS, "the original and its replacements, at the limit");
      const alert = await getAlert(kv, "fee_cap_reached", tx.txHash);
      assert.ok(alert);
      assert.equal(alert.count, 1);
      assert.match(alert.message, /versions/);
      // The latest version is still what the node holds: rebroadcasting it is harmless.
      await unbounded.broadcast(tx);
      assert.equal((await client.getTransaction({ hash: stored.at(-1)!.txHash as Hex })).blockNumber, null);
    });

    await t.step(
      "a replacement whose bytes do more than re-price is refused before it is recorded: never sent, the driver alerts",
      async () => {
        // The minter key signs what it is given: a signer that adds native value to the fee bump (a builder bug, or a
        // tampered dependency) is what the check stands against.
        let tamper = false;
        const lying: typeof minterAccount = {
          ...minterAccount,
          signTransaction: (tx, opts) =>
            minterAccount.signTransaction(tamper ? { ...tx, value: 1n } as typeof tx : tx, opts),
        };
        const bumper = evmMinter({
          chain: CHAIN,
          state: evmKvState(kv),
          client,
          account: lying,
          uAssets,
          chainId: CHAIN_ID,
          replaceAfterMs: 60_000,
          maxFeePerGasCap: 10n ** 30n,
          now: () => now,
        });
        const tx = await pendingMint(bumper as ReturnType<typeof minterWithCap>, "fees-tampered");
        await raiseBaseFee(anvil.url, (await versions(tx)).at(-1)!.maxFeePerGas! + 1n);
        tamper = true;
        now += 60_001;
        const reader = { txStatus: () => Promise.resolve({ state: "pending" as const }) };
        const deps = { kv, chains: { reader: () => reader } as unknown as Chains, now: new Date(now) };
        const intent = { ...sentTxOf(CHAIN, tx, new Date(now - 120_000)) };
        const opts = { required: 1, policy: ORDER_POLICY, sender: bumper, label: "test", afterDeath: "-" };
        const refused = await followSentTx(deps, intent, opts).then(() => null, (err) => err);
        assert.ok(refused instanceof ReplacementMismatchError, String(refused));
        assert.match(refused.message, /change outputs/);
        assert.equal((await kv.get(replacementsKey(CHAIN, tx.txHash))).value, null, "nothing recorded");
        const alert = await getAlert(kv, "transaction_mismatch", `${CHAIN}:${tx.txHash}`);
        assert.ok(alert, "an operator is told at once");
        assert.equal(alert.message, refused.message);
        // Never sent: the node has never seen the refused replacement.
        const seen = await client.request({
          method: "eth_getTransactionByHash",
          params: [refused.replacementHash as Hex],
        });
        assert.equal(seen, null);
        // The honest signer's bump passes the same check and is recorded.
        tamper = false;
        now += 60_001;
        await followSentTx({ ...deps, now: new Date(now) }, intent, opts);
        assert.equal((await kv.get<Replacement[]>(replacementsKey(CHAIN, tx.txHash))).value?.length, 1);
      },
    );

    await t.step("the first signing never offers more than the cap: signed at the cap, and an alert", async () => {
      const low = 1_000_000_000n; // 1 gwei, far below today's estimate after the rises above
      const estimate = await client.estimateFeesPerGas();
      assert.ok(estimate.maxFeePerGas > low);
      const tx = await minterWithCap(low).prepareMint({
        depositId: depositId("fees-first"),
        to: other.address,
        asset: "uSOL",
        amountWei: 1n,
      });
      const signed = parseTransaction(tx.raw as Hex);
      assert.equal(signed.maxFeePerGas, low);
      assert.ok(signed.maxPriorityFeePerGas! <= low);
      const alert = await getAlert(kv, "fee_cap_reached", tx.txHash);
      assert.ok(alert);
      assert.match(alert.message, /cap/);
    });

    await t.step("the configured <CHAIN>_MAX_FEE_PER_GAS_WEI reaches the minter the registry builds", async () => {
      const keyFile = `${dir}/minter.key`;
      await Deno.writeTextFile(keyFile, ANVIL_PRIVATE_KEYS[1], { mode: 0o600 });
      const configured = 1_500_000_000n;
      const evm = loadEvmConfig({
        BASE_RPC_URLS: anvil.url,
        BASE_UASSETS: uAssetsEnvValue(uAssets),
        EVM_MINTER_KEY_FILE: keyFile,
        BASE_MAX_FEE_PER_GAS_WEI: configured.toString(),
      });
      const { chains } = await buildChains(kv, chainPlan("live", evm), evm, TRANSFER_ADDRESS);
      assert.ok((await client.estimateFeesPerGas()).maxFeePerGas > configured);
      const tx = await chains.minter(CHAIN).prepareMint({
        depositId: depositId("fees-configured"),
        to: other.address,
        asset: "uSOL",
        amountWei: 1n,
      });
      assert.equal(parseTransaction(tx.raw as Hex).maxFeePerGas, configured);
    });
  } finally {
    kv.close();
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Makes the network's fee estimate rise: the next block's base fee is set to `baseFee` and that block is mined (a
 * pending transaction offering less stays out of it), so `latest` carries the higher base fee.
 */
async function raiseBaseFee(url: string, baseFee: bigint) {
  await anvilRpc(url, "anvil_setNextBlockBaseFeePerGas", [toHex(baseFee)]);
  await anvilRpc(url, "evm_mine");
}

/** Deploys the five uAssets with the minter key holding MINTER_ROLE. */
async function deployUAssets(url: string): Promise<Record<UAsset, Address>>;
async function deployUAssets(url: string, count: number, minter: Address): Promise<Address[]>;
async function deployUAssets(url: string, count?: number, minter?: Address) {
  if (count !== undefined) {
    const wallet = createWalletClient({ account: admin, transport: http(url) });
    const reader = createPublicClient({ transport: http(url) });
    const out: Address[] = [];
    for (let i = 0; i < count; i++) {
      const hash = await wallet.deployContract({
        abi: UASSET_ABI,
        bytecode: UASSET_BYTECODE,
        args: [`Stranger ${i}`, `STR${i}`, admin.address, minter!, SUPPLY_CAP, SUPPLY_CAP],
        chain: null,
      });
      out.push((await reader.waitForTransactionReceipt({ hash, pollingInterval: 10 })).contractAddress!);
    }
    return out;
  }
  const wallet = createWalletClient({ account: admin, transport: http(url) });
  const reader = createPublicClient({ transport: http(url) });
  const out = {} as Record<UAsset, Address>;
  for (const c of NATIVE_CHAINS) {
    const { symbol, name } = NATIVE[c].uAsset;
    const hash = await wallet.deployContract({
      abi: UASSET_ABI,
      bytecode: UASSET_BYTECODE,
      args: [name, symbol, admin.address, minterAccount.address, SUPPLY_CAP, SUPPLY_CAP],
      chain: null,
    });
    const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 10 });
    out[symbol] = receipt.contractAddress!;
  }
  return out;
}
