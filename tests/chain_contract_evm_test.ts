/**
 * The chain contract suite (tests/support/chain_contract.ts) against the EVM adapter on a real anvil node (automine;
 * `safe` = latest - 2, so finality is a few blocks away): uAsset transfers to the transfer address are the deposits,
 * mints are our transactions, a reorg is an `evm_revert` to a snapshot followed by another history, and a mint dies
 * when its nonce is used by another transaction that reaches the `safe` block.
 */
import {
  type Address,
  createWalletClient,
  type Hex,
  http,
  keccak256,
  parseTransaction,
  toHex,
  zeroAddress,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { EVM, type UAsset } from "../chains/catalog.ts";
import { evmChainAdapters } from "../chains/evm/index.ts";
import { UASSET_ABI } from "../contracts/uasset.ts";
import { openKv } from "../kv/open.ts";
import { ANVIL_PRIVATE_KEYS, anvilRpc, deployTestUAssets, startAnvil } from "./support/anvil.ts";
import { type ContractHarness, runChainContract } from "./support/chain_contract.ts";
import { evmKvState } from "../kv/chain_state.ts";

const CHAIN = "base" as const;
const minter = privateKeyToAccount(ANVIL_PRIVATE_KEYS[1]);
const holder = privateKeyToAccount(ANVIL_PRIVATE_KEYS[2]);
const other = privateKeyToAccount(ANVIL_PRIVATE_KEYS[3]);
const TRANSFER_ADDRESS = privateKeyToAccount(ANVIL_PRIVATE_KEYS[5]).address;

Deno.test("chain contract: EVM adapter on anvil", async (t) => {
  const anvil = await startAnvil({ chainId: EVM[CHAIN].chainId, slotsInAnEpoch: 2 });
  const dir = await Deno.makeTempDir({ prefix: "chain-contract-evm-" });
  const kv = await openKv(`${dir}/kv.sqlite3`);
  try {
    const { addresses } = await deployTestUAssets(anvil.url, minter.address);
    const uAssets = addresses as Record<UAsset, Address>;
    const evm = await evmChainAdapters({
      chain: CHAIN,
      state: evmKvState(kv),
      urls: [anvil.url],
      account: minter,
      uAssets,
      transferAddress: TRANSFER_ADDRESS,
      maxRange: 50,
    });
    const wallet = (account: typeof minter) =>
      createWalletClient({ account, chain: evm.client.chain, transport: http(anvil.url) });
    const mined = (hash: Hex) => evm.client.waitForTransactionReceipt({ hash, pollingInterval: 10 });
    const mine = (blocks: number) => anvilRpc(anvil.url, "anvil_mine", [toHex(blocks)]);
    const depositId = (label: string) => keccak256(toHex(`chain-contract-evm:${label}`));
    let funded = 0;

    const harness: ContractHarness = {
      name: "EVM on anvil",
      chain: CHAIN,
      kv,
      reader: evm.reader,
      sender: evm.minter,
      confirmations: 2,
      prepare: (label) =>
        evm.minter.prepareMint({ depositId: depositId(label), to: holder.address, asset: "uSOL", amountWei: 3n }),
      landed: async (label) => {
        const minted = await evm.minter.mintedBy(depositId(label));
        return minted === null ? [] : [minted.toLowerCase()];
      },
      transferToUs: async () => {
        const amount = 10n ** 18n;
        // The holder gets uXRP from a mint outside the pipeline, then sends it to the transfer address (a burn).
        await mined(
          await wallet(minter).writeContract({
            address: uAssets.uXRP,
            abi: UASSET_ABI,
            functionName: "mint",
            args: [holder.address, amount, depositId(`fund-${funded++}`)],
          }),
        );
        const hash = await wallet(holder).writeContract({
          address: uAssets.uXRP,
          abi: UASSET_ABI,
          functionName: "transfer",
          args: [TRANSFER_ADDRESS, amount],
        });
        await mined(hash);
        return { txHash: hash.toLowerCase(), amount };
      },
      mine: async (blocks) => void await mine(blocks),
      checkpoint: async () => {
        const snapshot = await anvilRpc<string>(anvil.url, "evm_snapshot");
        return async () => {
          const height = await evm.client.getBlockNumber();
          await anvilRpc(anvil.url, "evm_revert", [snapshot]);
          // Another history at the same heights and above.
          await mined(await wallet(other).sendTransaction({ to: zeroAddress, value: 1n }));
          const now = await evm.client.getBlockNumber();
          if (now <= height) await mine(Number(height - now) + 1);
        };
      },
      kill: {
        kind: "conflict",
        // Someone with the minter key uses the recorded mint's nonce for another transaction.
        run: async (tx) => {
          const nonce = parseTransaction(tx.raw as Hex).nonce!;
          await mined(await wallet(minter).sendTransaction({ to: zeroAddress, value: 1n, nonce }));
        },
      },
      unsupported: {
        "skipped block scanned past": "EVM chains never skip a height",
        "reservation released when its transaction is proven dead":
          "a mint spends no coins, and its nonce is never given back: the transaction that proved it dead used it",
      },
      close: async () => {},
    };
    await runChainContract(t, harness);
  } finally {
    kv.close();
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
