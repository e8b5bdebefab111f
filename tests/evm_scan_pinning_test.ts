/**
 * `scan` against several RPC URLs where one node lags: the scan must not take the range's end from one node and the
 * logs from another that does not have those blocks yet, or the watcher moves its cursor past burns it never saw.
 * Nor may it vouch for logs with a header the chain replaced while the logs were read. The nodes are local JSON-RPC
 * proxies in front of one real anvil (tests/support/rpc_proxy.ts).
 */
import assert from "node:assert/strict";
import { createWalletClient, http, keccak256, type LocalAccount, parseEther, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { TransientChainError } from "../chains/adapter.ts";
import { EVM } from "../chains/catalog.ts";
import { evmClient, evmReader } from "../chains/evm/index.ts";
import { UASSET_ABI } from "../contracts/uasset.ts";
import { watchOnce } from "../actors/watcher.ts";
import { type Cursor, cursorKey, seenKey } from "../kv/pipeline.ts";
import { openKv } from "../kv/open.ts";
import { getAlert } from "../kv/alerts.ts";
import { ANVIL_PRIVATE_KEYS, anvilRpc, deployTestUAssets, startAnvil } from "./support/anvil.ts";
import { laggingNode, rpcProxy } from "./support/rpc_proxy.ts";
import { watcherOnlyContext } from "./support/watch.ts";

const CHAIN = "base" as const;
const CHAIN_ID = EVM[CHAIN].chainId;
const [minterKey, holderKey, transferKey] = [1, 2, 5].map((i) => ANVIL_PRIVATE_KEYS[i]);
const minter = privateKeyToAccount(minterKey);
const holder = privateKeyToAccount(holderKey);
const TRANSFER_ADDRESS = privateKeyToAccount(transferKey).address;

Deno.test(
  "scan through local JSON-RPC proxies in front of anvil: a lagging node never makes the watcher skip a burn",
  async () => {
    const anvil = await startAnvil({ chainId: CHAIN_ID });
    const dir = await Deno.makeTempDir({ prefix: "evm-scan-pinning-" });
    const kv = await openKv(`${dir}/kv.sqlite3`);
    // Node A is complete but refuses log queries; node B answers logs but lags behind A.
    const failingLogs = rpcProxy(anvil.url, {
      answer: (req) => req.method === "eth_getLogs" ? { status: 503, body: "upstream unavailable" } : undefined,
    });
    let lagging: ReturnType<typeof laggingNode> | undefined;
    try {
      const { addresses: uAssets } = await deployTestUAssets(anvil.url, minter.address, {
        chain: CHAIN,
        supplyCap: "1000",
      });
      const direct = evmClient({ chain: CHAIN, urls: [anvil.url], chainId: CHAIN_ID });
      const walletOf = (account: LocalAccount) =>
        createWalletClient({ account, chain: direct.chain, transport: http(anvil.url) });
      const mintHash = await walletOf(minter).writeContract({
        address: uAssets.uSOL,
        abi: UASSET_ABI,
        functionName: "mint",
        args: [holder.address, parseEther("5"), keccak256(toHex("scan-pinning"))],
      });
      // anvil's automine answers a send before it seals the block: wait for the receipt, not the answer.
      await direct.waitForTransactionReceipt({ hash: mintHash, pollingInterval: 10 });
      const startBlock = await blockNumber(anvil.url);
      await anvilRpc(anvil.url, "anvil_mine", ["0x3"]);
      const head = await blockNumber(anvil.url);
      lagging = laggingNode(anvil.url, head);

      // The burn lands above the lagging node's head, with more blocks after it.
      const burnHash = await walletOf(holder).writeContract({
        address: uAssets.uSOL,
        abi: UASSET_ABI,
        functionName: "transfer",
        args: [TRANSFER_ADDRESS, parseEther("1")],
      });
      const burnBlock = Number(
        (await direct.waitForTransactionReceipt({ hash: burnHash, pollingInterval: 10 })).blockNumber,
      );
      assert.ok(burnBlock > head);
      await anvilRpc(anvil.url, "anvil_mine", ["0x3"]);
      const tip = await blockNumber(anvil.url);

      const client = evmClient({ chain: CHAIN, urls: [failingLogs.url, lagging.url], chainId: CHAIN_ID });
      const reader = evmReader({ chain: CHAIN, client, uAssets, transferAddress: TRANSFER_ADDRESS, maxRange: 1_000 });

      // The reader alone: the burn is returned, or the scan is refused; never an answer without it.
      const scanned = await reader.scan(startBlock + 1, tip).catch((err) => {
        assert.ok(err instanceof TransientChainError, `expected a TransientChainError, got ${err}`);
        return null;
      });
      if (scanned) {
        const found = scanned.flatMap((b) => b.transfers).some((t) => t.txHash === burnHash.toLowerCase());
        assert.ok(found, `scan ${startBlock + 1}..${tip} returned without the transfer of block ${burnBlock}`);
      }

      // The lagging node first and a complete one second: the scan moves on to the complete node and finds the burn.
      const laggingFirst = evmReader({
        chain: CHAIN,
        client: evmClient({ chain: CHAIN, urls: [lagging.url, anvil.url], chainId: CHAIN_ID }),
        uAssets,
        transferAddress: TRANSFER_ADDRESS,
        maxRange: 1_000,
      });
      const found = (await laggingFirst.scan(startBlock + 1, tip)).find((b) => b.number === burnBlock);
      assert.deepEqual(found?.transfers.map((t) => t.txHash), [burnHash.toLowerCase()]);

      // The watcher over the first reader: its cursor never passes the burn's block while the burn is unrecorded.
      const ctx = watcherOnlyContext(kv, reader, {
        chain: CHAIN,
        transferAddress: TRANSFER_ADDRESS,
        blockMs: 1_000,
        startBlock,
      });
      const burnSeen = async () => (await kv.get(seenKey(CHAIN, burnHash.toLowerCase(), 0))).value !== null;
      const assertCursorSafe = async () => {
        const cursor = (await kv.get<Cursor>(cursorKey(CHAIN))).value;
        if (cursor && cursor.number >= burnBlock) {
          assert.ok(await burnSeen(), `cursor at ${cursor.number} passed block ${burnBlock} without recording it`);
        }
      };
      const tick = async () => {
        try {
          await watchOnce(ctx, CHAIN, "test", 60_000);
        } catch (err) {
          assert.ok(err instanceof TransientChainError, `expected a TransientChainError, got ${err}`);
        }
        await assertCursorSafe();
      };

      await tick();
      await tick();
      // The lagging node catches up: the next ticks record the burn.
      lagging.state.head = null;
      for (let i = 0; i < 5 && !(await burnSeen()); i++) await tick();
      assert.ok(await burnSeen(), "the burn is recorded once a complete node answers");
      assert.equal((await kv.get<Cursor>(cursorKey(CHAIN))).value?.number, tip);
    } finally {
      kv.close();
      await failingLogs.close();
      await lagging?.close();
      await anvil.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

async function blockNumber(url: string): Promise<number> {
  return Number(await anvilRpc<string>(url, "eth_blockNumber"));
}

Deno.test(
  "scan through a local JSON-RPC proxy in front of anvil: a reorg between the range's header and its logs is refused",
  async () => {
    const anvil = await startAnvil({ chainId: CHAIN_ID });
    let reorgOnLogs = false;
    let snapshot = "";
    // Before answering eth_getLogs, the proxy replaces the last three blocks with others of the same heights.
    const node = rpcProxy(anvil.url, {
      answer: async (req) => {
        if (req.method !== "eth_getLogs" || !reorgOnLogs) return undefined;
        reorgOnLogs = false;
        const head = await blockNumber(anvil.url);
        const { timestamp } = await anvilRpc<{ timestamp: string }>(anvil.url, "eth_getBlockByNumber", [
          "latest",
          false,
        ]);
        await anvilRpc(anvil.url, "evm_revert", [snapshot]);
        await anvilRpc(anvil.url, "evm_setNextBlockTimestamp", [Number(timestamp) + 1_000]);
        await anvilRpc(anvil.url, "anvil_mine", [toHex(head - (await blockNumber(anvil.url)))]);
        return undefined;
      },
    });
    try {
      const { addresses: uAssets } = await deployTestUAssets(anvil.url, minter.address, {
        chain: CHAIN,
        supplyCap: "1000",
      });
      const from = await blockNumber(anvil.url);
      snapshot = await anvilRpc<string>(anvil.url, "evm_snapshot");
      await anvilRpc(anvil.url, "anvil_mine", ["0x3"]);
      const to = await blockNumber(anvil.url);
      const client = evmClient({ chain: CHAIN, urls: [node.url], chainId: CHAIN_ID });
      const reader = evmReader({ chain: CHAIN, client, uAssets, transferAddress: TRANSFER_ADDRESS, maxRange: 1_000 });
      const before = await reader.blockHash(to);

      reorgOnLogs = true;
      await assert.rejects(() => reader.scan(from, to), (err: Error) => {
        assert.ok(err instanceof TransientChainError, String(err));
        assert.match(err.message, new RegExp(`block ${to} changed during a scan`));
        return true;
      });
      const after = await reader.blockHash(to);
      assert.notEqual(after, before, "the proxy did reorganise the chain");
      // Asked again, the scan vouches for the chain that is there now.
      const rescanned = await reader.scan(from, to);
      assert.deepEqual(rescanned.at(-1) && [rescanned.at(-1)!.number, rescanned.at(-1)!.hash], [to, after]);
      for (const b of rescanned) assert.equal(b.hash, await reader.blockHash(b.number), `block ${b.number} canonical`);
    } finally {
      await node.close();
      await anvil.stop();
    }
  },
);

Deno.test(
  "watcher on anvil: a shallow reorg right after a long quiet catch-up rescans from a remembered checkpoint, no halt",
  async () => {
    const anvil = await startAnvil({ chainId: CHAIN_ID });
    const dir = await Deno.makeTempDir({ prefix: "evm-checkpoints-" });
    const kv = await openKv(`${dir}/kv.sqlite3`);
    try {
      const { addresses: uAssets } = await deployTestUAssets(anvil.url, minter.address, {
        chain: CHAIN,
        supplyCap: "1000",
      });
      const client = evmClient({ chain: CHAIN, urls: [anvil.url], chainId: CHAIN_ID });
      const walletOf = (account: LocalAccount) =>
        createWalletClient({ account, chain: client.chain, transport: http(anvil.url) });
      await walletOf(minter).writeContract({
        address: uAssets.uSOL,
        abi: UASSET_ABI,
        functionName: "mint",
        args: [holder.address, parseEther("5"), keccak256(toHex("checkpoints"))],
      });
      const startBlock = await blockNumber(anvil.url);
      const reader = evmReader({ chain: CHAIN, client, uAssets, transferAddress: TRANSFER_ADDRESS, maxRange: 1_000 });
      const ctx = watcherOnlyContext(kv, reader, {
        chain: CHAIN,
        transferAddress: TRANSFER_ADDRESS,
        blockMs: 1_000,
        startBlock,
      });

      // 150 quiet blocks, caught up in one tick: nothing of ours in them.
      await anvilRpc(anvil.url, "anvil_mine", [toHex(147)]);
      const snapshot = await anvilRpc<string>(anvil.url, "evm_snapshot");
      await anvilRpc(anvil.url, "anvil_mine", ["0x3"]);
      const tip = await blockNumber(anvil.url);
      await watchOnce(ctx, CHAIN, "test", 60_000);
      assert.equal((await kv.get<Cursor>(cursorKey(CHAIN))).value?.number, tip);

      // A three-block reorg: the replacement blocks carry a burn.
      await anvilRpc(anvil.url, "evm_revert", [snapshot]);
      const burnHash = await walletOf(holder).writeContract({
        address: uAssets.uSOL,
        abi: UASSET_ABI,
        functionName: "transfer",
        args: [TRANSFER_ADDRESS, parseEther("1")],
      });
      await anvilRpc(anvil.url, "anvil_mine", ["0x2"]);
      assert.equal(await blockNumber(anvil.url), tip);

      const result = await watchOnce(ctx, CHAIN, "test", 60_000);
      assert.equal(await getAlert(kv, "deep_reorg", CHAIN), null, "a three-block reorg is not deeper than the memory");
      assert.equal(result.scannedTo, tip);
      assert.ok((await kv.get(seenKey(CHAIN, burnHash.toLowerCase(), 0))).value, "the burn in the new blocks");
    } finally {
      kv.close();
      await anvil.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
