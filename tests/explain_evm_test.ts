/**
 * Verify before record for the EVM chains (chains/evm/explain.ts, chains/effects.ts) against a real anvil node with
 * the five uAssets deployed from contracts/ (tests/support/live_base.ts): real mints from the minter (minter.ts) and
 * real burns and refunds from the transfer address (uasset_sender.ts) are decoded from their own signed bytes and
 * compared with what they were asked for; builders asked to do something else than the intent (another amount,
 * recipient, deposit id, contract, chain id, signer) are caught by `differences`; bytes we never build are refused.
 */
import assert from "node:assert/strict";
import {
  type Address,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  keccak256,
  parseTransaction,
  serializeTransaction,
  toHex,
  toRlp,
  type TransactionSerializableEIP1559,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { PreparedTx } from "../chains/adapter.ts";
import { EVM, type UAsset } from "../chains/catalog.ts";
import { differences, type TxEffects, type TxIntent } from "../chains/effects.ts";
import { explainEvmTx } from "../chains/evm/explain.ts";
import {
  evmClient,
  evmMinter,
  evmUAssetSender,
  signerAccount,
  TRANSFER_ADDRESS_INDEX,
  UASSET_ADAPTER_ABI,
} from "../chains/evm/index.ts";
import { Signer } from "../chains/signer.ts";
import { DEVNET_CHAIN_ID } from "../config/chain_mode.ts";
import { UASSET_ABI } from "../contracts/uasset.ts";
import { addReservations, evmKvState } from "../kv/chain_state.ts";
import { openKv } from "../kv/open.ts";
import { ANVIL_PRIVATE_KEYS, anvilRpc } from "./support/anvil.ts";
import { TEST_MNEMONIC } from "./support/deploy.ts";
import { deployer, holder, liveBase, minter } from "./support/live_base.ts";

const ETH = 10n ** 18n;
const CHAIN = "base" as const;
const stranger = privateKeyToAccount(ANVIL_PRIVATE_KEYS[7]);
const depositId = (label: string) => keccak256(toHex(`explain-evm-test:${label}`));
const lower = (a: string) => a.toLowerCase();

Deno.test("explainEvmTx on anvil (real node): real mints, burns and refunds decoded, builder lies named", async (t) => {
  const live = await liveBase();
  const kv = await openKv(`${live.dir}/kv.sqlite3`);
  try {
    const { uAssets } = live;
    const client = evmClient({ chain: CHAIN, urls: [live.anvil.url], chainId: DEVNET_CHAIN_ID });
    const makeMinter = (over: { uAssets?: Record<UAsset, Address>; chainId?: number } = {}) =>
      evmMinter({
        chain: CHAIN,
        state: evmKvState(kv),
        client,
        account: minter,
        uAssets,
        chainId: DEVNET_CHAIN_ID,
        ...over,
      });
    const mints = makeMinter();
    const transferAccount = signerAccount(Signer.fromMnemonic(TEST_MNEMONIC), CHAIN, TRANSFER_ADDRESS_INDEX);
    const makeSender = (account = transferAccount) =>
      evmUAssetSender({ chain: CHAIN, state: evmKvState(kv), client, account, uAssets, chainId: DEVNET_CHAIN_ID });
    const sender = makeSender();
    // live.fund makes the deployer a minter of what it funds (uXRP here); uSOL is minted by hand below.
    const deployerWallet = createWalletClient({
      account: deployer,
      chain: live.client.chain,
      transport: http(live.anvil.url),
    });
    const mined = async (hash: Hex) =>
      assert.equal((await live.client.waitForTransactionReceipt({ hash, pollingInterval: 10 })).status, "success");
    await mined(
      await deployerWallet.writeContract({
        chain: null,
        address: uAssets.uSOL,
        abi: UASSET_ABI,
        functionName: "configureMinter",
        args: [deployer.address, 2n ** 200n],
      }),
    );
    for (const who of [sender.address as Address, holder.address]) {
      await live.fund("uXRP", who, 10n * ETH);
      await mined(
        await deployerWallet.writeContract({
          chain: null,
          address: uAssets.uSOL,
          abi: UASSET_ABI,
          functionName: "mint",
          args: [who, 10n * ETH, keccak256(toHex(`explain-evm-test:fund:${who}`))],
        }),
      );
    }
    await anvilRpc(live.anvil.url, "anvil_setBalance", [sender.address, toHex(ETH)]);

    const mintIntent = (over: Partial<Extract<TxIntent, { kind: "mint" }>> = {}): TxIntent => ({
      kind: "mint",
      chain: CHAIN,
      chainId: DEVNET_CHAIN_ID,
      from: minter.address,
      contract: uAssets.uSOL,
      asset: "uSOL",
      depositId: depositId("mint"),
      to: stranger.address,
      amount: 1_234_567_890_123_456_789n,
      ...over,
    });
    const mintRequest = (i: Extract<TxIntent, { kind: "mint" }>) => ({
      depositId: i.depositId,
      to: i.to,
      asset: i.asset,
      amountWei: i.amount,
    });
    const burnIntent: Extract<TxIntent, { kind: "burn" }> = {
      kind: "burn",
      chain: CHAIN,
      chainId: DEVNET_CHAIN_ID,
      from: sender.address,
      contract: uAssets.uXRP,
      asset: "uXRP",
      amount: 3n * ETH + 7n,
    };
    const transferIntent: Extract<TxIntent, { kind: "transfer" }> = {
      kind: "transfer",
      chain: CHAIN,
      chainId: DEVNET_CHAIN_ID,
      from: sender.address,
      contract: uAssets.uXRP,
      asset: "uXRP",
      to: holder.address,
      amount: 2n * ETH + 1n,
    };
    /** What the builder's own signing put in the bytes, read with viem's parser only to check maxFee's product. */
    const feeOf = (tx: PreparedTx) => {
      const p = parseTransaction(tx.raw as Hex);
      return p.gas! * p.maxFeePerGas!;
    };

    await t.step(
      "a real mint: every field decoded from its signed bytes, no differences; the chain agrees",
      async () => {
        const intent = mintIntent() as Extract<TxIntent, { kind: "mint" }>;
        const tx = await mints.prepareMint(mintRequest(intent));
        const effects = await explainEvmTx(tx.raw, CHAIN);
        assert.equal(effects.chain, "base");
        assert.equal(effects.from, lower(minter.address));
        assert.equal(effects.chainId, DEVNET_CHAIN_ID);
        assert.equal(effects.nonce, 0n);
        assert.deepEqual(effects.outputs, []);
        assert.equal(effects.memo, null);
        assert.equal(effects.inputs, undefined);
        assert.equal(effects.expiry, undefined);
        assert.ok(effects.maxFee! > 0n);
        assert.equal(effects.maxFee, feeOf(tx));
        assert.deepEqual(effects.call, {
          contract: lower(uAssets.uSOL),
          function: "mint",
          depositId: intent.depositId,
          to: lower(stranger.address),
          amount: intent.amount,
        });
        assert.deepEqual(differences(intent, effects, tx), []);

        // Recorded with its nonce reservation and sent: the chain mints exactly what the bytes were read to do.
        assert.ok((await addReservations(kv.atomic(), tx).commit()).ok);
        await mints.broadcast(tx);
        const receipt = await live.client.waitForTransactionReceipt({ hash: tx.txHash as Hex, pollingInterval: 10 });
        assert.equal(receipt.status, "success");
        assert.equal(lower(receipt.from), effects.from);
        assert.equal(await live.balanceOf("uSOL", stranger.address), intent.amount);
        assert.equal(await live.minted("uSOL", intent.depositId), true);

        // The next mint takes the next nonce, and the bytes say so.
        const next = await mints.prepareMint(mintRequest(mintIntent({ depositId: depositId("second") }) as never));
        assert.equal((await explainEvmTx(next.raw, CHAIN)).nonce, 1n);
      },
    );

    await t.step("a real burn by the transfer address: decoded field by field, no differences", async () => {
      const tx = await sender.prepareBurn({ asset: "uXRP", amount: burnIntent.amount, batchId: "batch-1" });
      const effects = await explainEvmTx(tx.raw, CHAIN);
      assert.equal(effects.chain, "base");
      assert.equal(effects.from, lower(sender.address));
      assert.equal(effects.chainId, DEVNET_CHAIN_ID);
      assert.equal(effects.nonce, 0n);
      assert.deepEqual(effects.outputs, []);
      assert.equal(effects.memo, null);
      assert.equal(effects.maxFee, feeOf(tx));
      assert.deepEqual(effects.call, { contract: lower(uAssets.uXRP), function: "burn", amount: burnIntent.amount });
      assert.deepEqual(differences(burnIntent, effects, tx), []);
    });

    await t.step("a real refund transfer by the transfer address: decoded field by field, no differences", async () => {
      const tx = await sender.prepareTransfer({
        asset: "uXRP",
        to: transferIntent.to,
        amount: transferIntent.amount,
        refundId: "held-1",
      });
      const effects = await explainEvmTx(tx.raw, CHAIN);
      assert.equal(effects.from, lower(sender.address));
      assert.equal(effects.chainId, DEVNET_CHAIN_ID);
      assert.equal(effects.nonce, 0n);
      assert.deepEqual(effects.outputs, []);
      assert.equal(effects.memo, null);
      assert.equal(effects.maxFee, feeOf(tx));
      assert.deepEqual(effects.call, {
        contract: lower(uAssets.uXRP),
        function: "transfer",
        to: lower(holder.address),
        amount: transferIntent.amount,
      });
      assert.deepEqual(differences(transferIntent, effects, tx), []);
    });

    /** Builds with the real builder from `request`, decodes the real bytes, returns what differs from `intent`. */
    const lieOfMint = async (intent: TxIntent, request: Extract<TxIntent, { kind: "mint" }>, builder = mints) => {
      const tx = await builder.prepareMint(mintRequest(request));
      return differences(intent, await explainEvmTx(tx.raw, CHAIN), tx);
    };

    await t.step("mint builder lies: another amount, recipient, deposit id, contract, chain id are named", async () => {
      const intent = mintIntent({ depositId: depositId("tamper") }) as Extract<TxIntent, { kind: "mint" }>;
      assert.deepEqual(await lieOfMint(intent, { ...intent, amount: intent.amount * 10n }), [
        `amount ${intent.amount * 10n}, not ${intent.amount}`,
      ]);
      assert.deepEqual(await lieOfMint(intent, { ...intent, to: holder.address }), [
        `recipient ${lower(holder.address)}, not ${intent.to}`,
      ]);
      const otherId = depositId("someone else's deposit");
      assert.deepEqual(await lieOfMint(intent, { ...intent, depositId: otherId }), [
        `deposit id ${otherId}, not ${intent.depositId}`,
      ]);
      // A minter configured with uXRP's address for uSOL: the contract called is not the intent's.
      const misconfigured = makeMinter({ uAssets: { ...uAssets, uSOL: uAssets.uXRP } });
      assert.deepEqual(await lieOfMint(intent, intent, misconfigured), [
        `calls contract ${lower(uAssets.uXRP)}, not the uSOL contract ${uAssets.uSOL}`,
      ]);
      // A minter signing for Base mainnet's chain id while the intent is for this node's chain.
      const mainnet = makeMinter({ chainId: EVM.base.chainId });
      assert.deepEqual(await lieOfMint(intent, intent, mainnet), [
        `signed for chain id ${EVM.base.chainId}, not ${DEVNET_CHAIN_ID}`,
      ]);
      // Everything at once: every lie is its own sentence.
      const all = await lieOfMint(intent, { ...intent, amount: 1n, to: holder.address, depositId: otherId });
      assert.equal(all.length, 3, all.join("; "));
    });

    await t.step("burn and refund builder lies: amount, recipient, contract, function, signer are named", async () => {
      const burn = await sender.prepareBurn({ asset: "uXRP", amount: burnIntent.amount - 1n, batchId: "batch-2" });
      assert.deepEqual(differences(burnIntent, await explainEvmTx(burn.raw, CHAIN), burn), [
        `amount ${burnIntent.amount - 1n}, not ${burnIntent.amount}`,
      ]);
      const refund = { asset: "uXRP" as UAsset, to: transferIntent.to, amount: transferIntent.amount, refundId: "r" };
      const elsewhere = await sender.prepareTransfer({ ...refund, to: stranger.address });
      assert.deepEqual(differences(transferIntent, await explainEvmTx(elsewhere.raw, CHAIN), elsewhere), [
        `recipient ${lower(stranger.address)}, not ${transferIntent.to}`,
      ]);
      const otherAsset = await sender.prepareTransfer({ ...refund, asset: "uSOL" });
      assert.deepEqual(differences(transferIntent, await explainEvmTx(otherAsset.raw, CHAIN), otherAsset), [
        `calls contract ${lower(uAssets.uSOL)}, not the uXRP contract ${uAssets.uXRP}`,
      ]);
      // A burn recorded as the refund: the refund's holder gets nothing.
      const burnedInstead = await sender.prepareBurn({ asset: "uXRP", amount: refund.amount, batchId: "r" });
      assert.deepEqual(differences(transferIntent, await explainEvmTx(burnedInstead.raw, CHAIN), burnedInstead), [
        "calls burn, not transfer",
        `recipient none, not ${transferIntent.to}`,
      ]);
      // The same refund signed by another key than the transfer address.
      const wrongKey = makeSender(privateKeyToAccount(ANVIL_PRIVATE_KEYS[2]));
      const signedByHolder = await wrongKey.prepareTransfer(refund);
      assert.deepEqual(differences(transferIntent, await explainEvmTx(signedByHolder.raw, CHAIN), signedByHolder), [
        `signed by ${lower(holder.address)}, not ${sender.address}`,
      ]);
    });

    // Transactions no builder of ours makes, signed for real with viem by the minter key.
    const mintCall = encodeFunctionData({
      abi: UASSET_ADAPTER_ABI,
      functionName: "mint",
      args: [stranger.address, 5n, depositId("hand-made")],
    });
    const base: TransactionSerializableEIP1559 = {
      type: "eip1559",
      chainId: DEVNET_CHAIN_ID,
      nonce: 9,
      to: uAssets.uSOL,
      data: mintCall,
      value: 0n,
      gas: 100_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
    };
    const signed = (over: Record<string, unknown> = {}) =>
      minter.signTransaction({ ...base, ...over } as TransactionSerializableEIP1559);
    const refused = (raw: string, why: RegExp) =>
      assert.rejects(explainEvmTx(raw, CHAIN), (err: Error) => {
        assert.match(err.message, /^base: refusing to explain the transaction /);
        assert.match(err.message, why);
        return true;
      });

    await t.step("native value on a uAsset call is reported as an output, which differences names", async () => {
      const raw = await signed({ value: 7n });
      const effects: TxEffects = await explainEvmTx(raw, CHAIN);
      assert.deepEqual(effects.outputs, [{ to: lower(uAssets.uSOL), amount: 7n }]);
      assert.equal(effects.nonce, 9n);
      assert.equal(effects.maxFee, 200_000_000_000_000n);
      const intent = mintIntent({ depositId: depositId("hand-made"), amount: 5n });
      assert.deepEqual(differences(intent, effects, { txHash: keccak256(raw), raw }), [
        `moves native value: 7 to ${lower(uAssets.uSOL)}`,
      ]);
      // With no calldata at all it is a plain payment: no uAsset call, and the value is there to be named.
      const plain = await signed({ data: undefined, to: stranger.address, value: ETH });
      const paid = await explainEvmTx(plain, CHAIN);
      assert.equal(paid.call, undefined);
      assert.deepEqual(differences(intent, paid, { txHash: keccak256(plain), raw: plain }), [
        `moves native value: ${ETH} to ${lower(stranger.address)}`,
        "calls no uAsset function (expected mint)",
      ]);
    });

    await t.step("garbage bytes are refused with a clear error", async () => {
      await refused("", /not a 0x-prefixed hex string/);
      await refused("hello", /not a 0x-prefixed hex string/);
      await refused("0xzz", /not a 0x-prefixed hex string/);
      await refused("0xdeadbeef", /viem cannot parse it/);
      await refused(`0x02${"ff".repeat(40)}`, /viem cannot parse it/);
      const good = await signed();
      await refused(good.slice(0, -10), /viem cannot parse it/);
    });

    await t.step("transactions we never build are refused, naming what they hold", async () => {
      // Unsigned.
      await refused(serializeTransaction(base), /carries no signature/);
      // Other transaction types.
      await refused(
        await minter.signTransaction({
          type: "legacy",
          chainId: DEVNET_CHAIN_ID,
          nonce: 9,
          to: uAssets.uSOL,
          data: mintCall,
          gas: 100_000n,
          gasPrice: 1n,
        }),
        /its type is legacy; we sign eip1559 only/,
      );
      await refused(
        await minter.signTransaction({
          type: "eip2930",
          chainId: DEVNET_CHAIN_ID,
          nonce: 9,
          to: uAssets.uSOL,
          data: mintCall,
          gas: 100_000n,
          gasPrice: 1n,
          accessList: [],
        }),
        /its type is eip2930; we sign eip1559 only/,
      );
      // EIP-7702: would delegate the minter key's account to another contract's code.
      const authorization = await minter.signAuthorization({
        address: stranger.address,
        chainId: DEVNET_CHAIN_ID,
        nonce: 10,
      });
      await refused(
        await minter.signTransaction({ ...base, type: "eip7702", authorizationList: [authorization] }),
        /its type is eip7702; we sign eip1559 only/,
      );
      // A contract creation.
      await refused(await signed({ to: undefined, data: "0x6080604052" }), /creates a contract/);
      // Another function of the uAsset: approve would let a spender move our uAssets.
      const approve = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [stranger.address, 1n] });
      await refused(await signed({ data: approve }), /selector 0x095ea7b3\) is not a uAsset mint, burn or transfer/);
      // A read we never sign, and a bare selector.
      const minted = encodeFunctionData({ abi: UASSET_ADAPTER_ABI, functionName: "minted", args: [depositId("x")] });
      await refused(await signed({ data: minted }), /is not a uAsset mint, burn or transfer/);
      await refused(await signed({ data: mintCall.slice(0, 10) }), /is not a uAsset mint, burn or transfer/);
      // Bytes after the arguments, and an address with dirty high bits: not the canonical encoding of the call.
      await refused(await signed({ data: `${mintCall}00000001` }), /mint calldata is not the canonical encoding/);
      const dirty = `${mintCall.slice(0, 10)}ff${mintCall.slice(12)}` as Hex;
      await refused(await signed({ data: dirty }), /mint calldata is not the canonical encoding/);
      // An access list.
      await refused(
        await signed({ accessList: [{ address: uAssets.uSOL, storageKeys: [] }] }),
        /carries an access list/,
      );
    });

    await t.step("a malleated (high-s) or non-canonically encoded signed transaction is refused", async () => {
      const good = await signed();
      const p = parseTransaction(good);
      const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
      const highS = serializeTransaction({ ...base }, {
        r: p.r!,
        s: toHex(n - BigInt(p.s!), { size: 32 }),
        yParity: p.yParity === 0 ? 1 : 0,
      });
      await refused(highS, /high s/);
      // The same fields with the nonce RLP-encoded with a leading zero byte, signed for real over those bytes.
      const fields = [
        toHex(DEVNET_CHAIN_ID),
        "0x0009",
        toHex(base.maxPriorityFeePerGas!),
        toHex(base.maxFeePerGas!),
        toHex(base.gas!),
        base.to!,
        "0x",
        mintCall,
        [],
      ] as Hex[];
      const unsigned = `0x02${toRlp(fields).slice(2)}` as Hex;
      const sig = await minter.sign({ hash: keccak256(unsigned) });
      const r = `0x${sig.slice(2, 66)}` as Hex;
      const s = `0x${sig.slice(66, 130)}` as Hex;
      const yParity = parseInt(sig.slice(130, 132), 16) - 27;
      const raw = `0x02${toRlp([...fields, yParity === 0 ? "0x" : "0x01", r, s] as Hex[]).slice(2)}` as Hex;
      await refused(raw, /its encoding is not canonical/);
    });
  } finally {
    kv.close();
    await live.close();
  }
});
