/**
 * The chain contract suite (tests/support/chain_contract.ts) against the EVM adapter on a real anvil node (automine;
 * `safe` = latest - 2, so finality is a few blocks away): uAsset transfers to the transfer address are the deposits,
 * mints and the transfer address's burns are our transactions, a reorg is an `evm_revert` to a snapshot followed by
 * another history, and a mint or a burn dies when its nonce is used by another transaction that reaches the `safe`
 * block.
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
import { type LocalAccount, privateKeyToAccount } from "viem/accounts";
import { Signer } from "../chains/signer.ts";
import { signerAccount, TRANSFER_ADDRESS_INDEX } from "../chains/evm/index.ts";
import { TEST_MNEMONIC } from "./support/deploy.ts";
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
/**
 * The transfer address, signed for by the master mnemonic's key (chains/transfer_address.ts), as the service runs it:
 * the uAssets sent to it are the deposits, and its burns are its own transactions (chains/evm/uasset_sender.ts).
 */
const transferSigner = Signer.fromMnemonic(TEST_MNEMONIC);
const transfer = signerAccount(transferSigner, CHAIN, TRANSFER_ADDRESS_INDEX);
const TRANSFER_ADDRESS = transfer.address;

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
      transferSigner,
      maxRange: 50,
    });
    const burner = evm.uAssetSender!;
    // The operator funds the transfer address's gas (docs/onchain-burn.md).
    await anvilRpc(anvil.url, "anvil_setBalance", [TRANSFER_ADDRESS, toHex(10n ** 19n)]);
    const wallet = (account: LocalAccount) =>
      createWalletClient({ account, chain: evm.client.chain, transport: http(anvil.url) });
    const mined = (hash: Hex) => evm.client.waitForTransactionReceipt({ hash, pollingInterval: 10 });
    const mine = (blocks: number) => anvilRpc(anvil.url, "anvil_mine", [toHex(blocks)]);
    const depositId = (label: string) => keccak256(toHex(`chain-contract-evm:${label}`));
    let funded = 0;
    /** The amount each burn label burns: distinct, so its `Transfer` to the zero address names it. */
    const burns = new Map<string, bigint>();
    const burnsLanded = async (amount: bigint) =>
      (await evm.client.getContractEvents({
        address: uAssets.uSOL,
        abi: UASSET_ABI,
        eventName: "Transfer",
        args: { from: TRANSFER_ADDRESS, to: zeroAddress },
        fromBlock: 0n,
      })).filter((e) => e.args.value === amount).map((e) => e.transactionHash!.toLowerCase());

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
        const burned = burns.get(label);
        if (burned !== undefined) return await burnsLanded(burned);
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
        // Someone with the key of the account that signed it (the minter's, the transfer address's) uses its nonce for
        // another transaction.
        run: async (tx) => {
          const nonce = parseTransaction(tx.raw as Hex).nonce!;
          const signer =
            tx.consumes?.kind === "nonce" && tx.consumes.account.toLowerCase() === transfer.address.toLowerCase()
              ? transfer
              : minter;
          await mined(await wallet(signer).sendTransaction({ to: zeroAddress, value: 1n, nonce }));
        },
      },
      purposes: {
        burn: {
          sender: burner,
          // uAssets the transfer address holds (minted to it outside the pipeline), burned in one batch.
          async prepare(label) {
            const amount = 10n ** 15n + BigInt(funded);
            burns.set(label, amount);
            await mined(
              await wallet(minter).writeContract({
                address: uAssets.uSOL,
                abi: UASSET_ABI,
                functionName: "mint",
                args: [TRANSFER_ADDRESS, amount, depositId(`fund-${funded++}`)],
              }),
            );
            return await burner.prepareBurn({ asset: "uSOL", amount, batchId: label });
          },
        },
      },
      unsupported: {
        "skipped block scanned past": "EVM chains never skip a height",
        "reservation released when its transaction is proven dead":
          "a mint spends no coins, and its nonce is never given back: the transaction that proved it dead used it",
        "sweep: crash between record and broadcast, the driver re-sends the same bytes and it settles once":
          "an EVM chain has no deposit addresses to sweep",
        "sweep: proven dead by the driver, its reservations released": "an EVM chain has no deposit addresses to sweep",
        "consolidation: crash between record and broadcast, the driver re-sends the same bytes and it settles once":
          "an EVM chain holds no coins (UTXOs) to consolidate",
        "consolidation: proven dead by the driver, its reservations released":
          "an EVM chain holds no coins (UTXOs) to consolidate",
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
