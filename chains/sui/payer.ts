/**
 * The Sui payer: payouts from the hot wallet and sweeps of deposit addresses into it, built offline with @mysten/sui's
 * `Transaction` (sender, gas coins read over GraphQL, the epoch's reference gas price, a fixed gas budget, and an
 * expiration at the next epoch), signed through the signer (ed25519 over the BLAKE2b-256 digest of the intent message;
 * the key never leaves it) and executed with the `executeTransaction` mutation.
 *
 * Write-ahead: a prepared transaction names the exact gas coin versions it spends, returned as `consumes` and as
 * `coins` reservations (objectId as `txHash`, version as `index`). Two transactions signed over the same coin version
 * would equivocate (Sui locks such coins until the epoch ends): the recording atomic refuses the second, which is
 * prepared again once the first has executed and the coins have new versions, or once it is proven dead.
 */
import { messageWithIntent, toSerializedSignature } from "@mysten/sui/cryptography";
import { Ed25519PublicKey } from "@mysten/sui/keypairs/ed25519";
import { Transaction, TransactionDataBuilder } from "@mysten/sui/transactions";
import { blake2b } from "@noble/hashes/blake2.js";
import type {
  AccountAdapterOptions,
  AccountPayer,
  Outpoint,
  PayoutCheck,
  PayoutRequest,
  PreparedTx,
  SweepRequest,
} from "../adapter.ts";
import { base64 } from "@scure/base";
import { epochAnswer, gasCoinsAnswer, type SuiGasCoinsAnswer, suiRequest } from "./answers.ts";
import { normalizeSuiAddress, type SuiGraphql, SuiGraphqlError } from "./client.ts";
import { EPOCH, EXECUTE_TRANSACTION, GAS_COINS } from "./graphql.ts";

/**
 * Gas budget of every payout and sweep, in MIST (0.01 SUI): a transfer costs about 1,000 computation units at the
 * reference gas price plus storage for one new coin, well under this; unspent budget is not charged.
 */
export const SUI_GAS_BUDGET = 10_000_000n;
/** Sui accepts at most 256 gas payment objects; leave one spare. */
const MAX_GAS_COINS = 255;

export interface SuiGasCoin {
  objectId: string;
  version: string;
  digest: string;
  balance: bigint;
}

/** What `broadcast` sends: the transaction bytes and the serialized signature, both base64 (`raw` is their JSON). */
export interface SuiSignedTx {
  bytes: string;
  signature: string;
}

export function encodeSuiRaw(signed: SuiSignedTx): string {
  return JSON.stringify({ bytes: signed.bytes, signature: signed.signature });
}

export function decodeSuiRaw(raw: string): SuiSignedTx {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error("A Sui transaction is recorded as JSON {bytes, signature}: this one is not JSON");
  }
  const { bytes, signature } = parsed as Partial<SuiSignedTx>;
  if (typeof bytes !== "string" || typeof signature !== "string") {
    throw new Error("A recorded Sui transaction needs base64 `bytes` and `signature`");
  }
  return { bytes, signature };
}

/** The coins of `owner` as gas payment objects, largest first (ties by object id: the same choice every time). */
export async function suiGasCoins(gql: SuiGraphql, owner: string): Promise<SuiGasCoin[]> {
  const coins: SuiGasCoin[] = [];
  let after: string | null = null;
  for (;;) {
    const data: SuiGasCoinsAnswer = await suiRequest(gql, GAS_COINS, gasCoinsAnswer, {
      owner: normalizeSuiAddress(owner),
      after,
    });
    const page = data.address?.objects;
    if (!page) break;
    for (const node of page.nodes) {
      const balance = node.contents?.json?.balance;
      if (!node.digest || balance === undefined) continue;
      coins.push({ objectId: node.address, version: String(node.version), digest: node.digest, balance });
    }
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  return coins.sort((a, b) =>
    a.balance > b.balance ? -1 : a.balance < b.balance ? 1 : a.objectId < b.objectId ? -1 : 1
  );
}

/** The outpoint form of a coin version, for `consumes` and coin locks. */
export function coinOutpoint(coin: Pick<SuiGasCoin, "objectId" | "version">): Outpoint {
  return { txHash: coin.objectId, index: Number(coin.version) };
}

export function suiPayer(
  gql: SuiGraphql,
  signer: AccountAdapterOptions["signer"],
  hotIndex = 0,
): AccountPayer & { readonly hotWallet: string } {
  const hotWallet = normalizeSuiAddress(signer.address("sui", hotIndex, "hot"));

  async function epoch(): Promise<{ epochId: number; referenceGasPrice: bigint }> {
    const data = await suiRequest(gql, EPOCH, epochAnswer);
    if (!data.epoch || data.epoch.referenceGasPrice === null) {
      throw new Error("sui GraphQL: the node did not give the current epoch");
    }
    return { epochId: data.epoch.epochId, referenceGasPrice: data.epoch.referenceGasPrice };
  }

  /** Coins of `owner` covering `needed`, largest first; throws when they cannot. */
  function choose(coins: SuiGasCoin[], needed: bigint, owner: string): SuiGasCoin[] {
    const chosen: SuiGasCoin[] = [];
    let sum = 0n;
    for (const c of coins.slice(0, MAX_GAS_COINS)) {
      if (sum >= needed) break;
      chosen.push(c);
      sum += c.balance;
    }
    if (sum < needed) {
      throw new Error(
        `Sui address ${owner} holds ${sum} MIST in its largest coins, less than the ${needed} MIST needed`,
      );
    }
    return chosen;
  }

  /** Builds, signs and describes one transaction spending `coins` as gas, sent by the key (`index`, `branch`). */
  async function sign(
    build: (tx: Transaction) => void,
    from: { address: string; index: number; branch: "deposit" | "hot" },
    coins: SuiGasCoin[],
  ): Promise<PreparedTx> {
    const { epochId, referenceGasPrice } = await epoch();
    const tx = new Transaction();
    tx.setSender(from.address);
    tx.setGasOwner(from.address);
    tx.setGasPayment(coins.map((c) => ({ objectId: c.objectId, version: c.version, digest: c.digest })));
    tx.setGasPrice(referenceGasPrice);
    tx.setGasBudget(SUI_GAS_BUDGET);
    // Valid through the next epoch: past it, an unknown digest is proven dead.
    const expiration = epochId + 1;
    tx.setExpiration({ Epoch: expiration });
    build(tx);
    const bytes = await tx.build();
    const digest = blake2b(messageWithIntent("TransactionData", bytes), { dkLen: 32 });
    const publicKey = new Ed25519PublicKey(signer.publicKey("sui", from.index, from.branch));
    if (normalizeSuiAddress(publicKey.toSuiAddress()) !== from.address) {
      throw new Error(`The signer's sui key ${from.branch} ${from.index} is not the key of ${from.address}`);
    }
    // The signer process decodes the TransactionData itself and recomputes this digest from it.
    const unsigned = base64.encode(bytes);
    const signature = toSerializedSignature({
      signature: await signer.signMessage("sui", from.index, digest, from.branch, { unsigned }),
      signatureScheme: "ED25519",
      publicKey,
    });
    const outpoints = coins.map(coinOutpoint);
    return {
      txHash: TransactionDataBuilder.getDigestFromBytes(bytes),
      raw: encodeSuiRaw({ bytes: base64.encode(bytes), signature }),
      expiry: { kind: "epoch", value: expiration },
      consumes: { kind: "outpoints", outpoints },
      reservations: [{ kind: "coins", chain: "sui", outpoints }],
    };
  }

  async function send(raw: string): Promise<void> {
    const { bytes, signature } = decodeSuiRaw(raw);
    try {
      await gql.request(EXECUTE_TRANSACTION, { transactionDataBcs: bytes, signatures: [signature] });
    } catch (err) {
      // The same bytes again: the node answers with (or errors about) the effects it already has. Success.
      if (err instanceof SuiGraphqlError && err.messages.some((m) => /already (been )?executed/i.test(m))) return;
      throw err;
    }
  }

  function destinationOf(to: string): string {
    if (!/^0x[0-9a-fA-F]{64}$/.test(to)) throw new Error(`Invalid destination address: ${to} is not a Sui address`);
    return normalizeSuiAddress(to);
  }

  return {
    chain: "sui",
    family: "account",
    hotWallet,
    hotIndex,
    atHotIndex: (index: number) => suiPayer(gql, signer, index),

    async checkPayout(req: PayoutRequest): Promise<PayoutCheck> {
      destinationOf(req.to);
      const coins = await suiGasCoins(gql, hotWallet);
      const usable = coins.slice(0, MAX_GAS_COINS).reduce((s, c) => s + c.balance, 0n);
      if (usable - SUI_GAS_BUDGET < req.amount) {
        return {
          ok: false,
          reason: "unfunded",
          detail:
            `The Sui hot wallet ${hotWallet} holds ${usable} MIST; this payout needs ${req.amount} MIST plus up to ` +
            `${SUI_GAS_BUDGET} MIST of gas.`,
        };
      }
      return { ok: true, spendable: usable - SUI_GAS_BUDGET, fee: SUI_GAS_BUDGET };
    },

    async preparePayout(req: PayoutRequest): Promise<PreparedTx> {
      const to = destinationOf(req.to);
      if (req.amount <= 0n) throw new Error(`A Sui payout needs a positive amount, not ${req.amount}`);
      const coins = choose(await suiGasCoins(gql, hotWallet), req.amount + SUI_GAS_BUDGET, hotWallet);
      return await sign(
        (tx) => {
          const [coin] = tx.splitCoins(tx.gas, [tx.pure.u64(req.amount)]);
          tx.transferObjects([coin], tx.pure.address(to));
        },
        { address: hotWallet, index: hotIndex, branch: "hot" },
        coins,
      );
    },

    async prepareSweep(req: SweepRequest): Promise<PreparedTx> {
      const from = normalizeSuiAddress(req.from);
      const branch = req.branch ?? "deposit";
      await signer.loadKey?.("sui", req.derivationIndex, branch);
      const own = normalizeSuiAddress(signer.address("sui", req.derivationIndex, branch));
      if (own !== from) throw new Error(`Sui ${branch} key ${req.derivationIndex} is not the key of ${req.from}`);
      if (from === hotWallet) throw new Error(`Sui address ${from} is the hot wallet itself: nothing to sweep`);
      const coins = (await suiGasCoins(gql, from)).slice(0, MAX_GAS_COINS);
      const total = coins.reduce((s, c) => s + c.balance, 0n);
      if (total <= SUI_GAS_BUDGET) {
        throw new Error(
          `Sui deposit address ${from} holds ${total} MIST: not more than the ${SUI_GAS_BUDGET} MIST gas`,
        );
      }
      if (req.amount !== undefined && req.amount > total) {
        throw new Error(
          `Sui deposit address ${from} holds ${total} MIST in coins, less than the ${req.amount} to sweep`,
        );
      }
      // The whole gas coin (every coin merged into it) goes to the hot wallet, less the gas actually charged.
      return await sign(
        (tx) => {
          tx.transferObjects([tx.gas], tx.pure.address(hotWallet));
        },
        { address: from, index: req.derivationIndex, branch },
        coins,
      );
    },

    async broadcast(tx: PreparedTx): Promise<void> {
      await send(tx.raw);
    },

    async nudge(tx: PreparedTx): Promise<void> {
      // The recorded bytes again, never a new signature. A refusal (expired, coins used) changes nothing: txStatus
      // proves the transaction included or dead.
      try {
        await send(tx.raw);
      } catch (err) {
        if (!(err instanceof SuiGraphqlError)) throw err;
      }
    },
  };
}
