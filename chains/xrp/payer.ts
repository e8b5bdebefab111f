/**
 * The XRP Ledger payer: payouts from the hot wallet (`HOT_WALLET_PATHS.xrp`) and sweeps of deposit addresses into it,
 * signed through the adapter's signer (which never hands out a key).
 *
 * Signing (rippled's single signing): the transaction with `SigningPubKey` is serialised by `encodeForSigning` (which
 * puts the signing prefix 0x53545800 in front), its SHA-512Half is signed as a low-S DER signature, put in
 * `TxnSignature`; the blob is the encoded signed transaction and its hash `hashes.hashSignedTx`.
 *
 * Every transaction carries `LastLedgerSequence` = the validated ledger + the catalog's window (its `expiry`), and
 * consumes its account's `Sequence`, locked in the recording atomic (`sequence` reservation, kv/chain_state.ts) so
 * two transactions prepared at once never both take it.
 */
import { sha512 } from "@noble/hashes/sha2.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import { encode, encodeForSigning, hashes, isValidClassicAddress, type Payment } from "xrpl";
import type {
  AccountAdapterOptions,
  AccountPayer,
  PayoutCheck,
  PayoutRequest,
  PreparedTx,
  SweepRequest,
} from "../adapter.ts";
import { TransientChainError } from "../adapter.ts";
import { NATIVE } from "../catalog.ts";
import { accountInfo, feeAnswer, readAnswer, serverState, submitAnswer } from "./answers.ts";
import { isXrplError, type XrplRpc } from "./rpc.ts";

/** Our payouts never pay more than this fee (drops): above it the network is congested, the payout waits. */
export const MAX_FEE_DROPS = 10_000n; // 0.01 XRP
const MAX_DESTINATION_TAG = NATIVE.xrp.memo.kind === "destinationTag" ? NATIVE.xrp.memo.max : 4_294_967_295n;
const EXPIRY_WINDOW = NATIVE.xrp.expiry.kind === "height" ? NATIVE.xrp.expiry.window : 20;

/** What the node says about reserves and fees, from `server_state` (drops, integers). */
export interface XrpNetworkFacts {
  validatedLedger: number;
  reserveBase: bigint;
  reserveInc: bigint;
  baseFee: bigint;
}

interface AccountFacts {
  balance: bigint;
  ownerCount: bigint;
  sequence: number;
}

/** The destination tag a payout carries: the registered memo, a uint32 in decimal. */
export function destinationTagOf(memo: string | null): number {
  if (memo === null || !/^\d{1,10}$/.test(memo) || BigInt(memo) > MAX_DESTINATION_TAG) {
    throw new RangeError(
      `an XRP payout needs its destination tag as the memo, a whole number from 0 to ${MAX_DESTINATION_TAG}; got ` +
        `${memo === null ? "none" : JSON.stringify(memo)}`,
    );
  }
  return Number(memo);
}

/** SHA-512Half: the first 32 bytes of SHA-512, the XRPL's hash. */
export function sha512Half(bytes: Uint8Array): Uint8Array {
  return sha512(bytes).slice(0, 32);
}

export interface XrpPayerOptions {
  rpc: XrplRpc;
  signer: AccountAdapterOptions["signer"];
  /** The hot wallet's derivation index (chains/derivation.ts `hotWalletPath`); 0 when unset. */
  hotIndex?: number;
}

export function xrpPayer(
  opts: XrpPayerOptions,
): AccountPayer & { readonly hotWallet: string } {
  const { rpc, signer } = opts;
  const hotIndex = opts.hotIndex ?? 0;
  const hotWallet = signer.address("xrp", hotIndex, "hot");

  async function network(): Promise<XrpNetworkFacts> {
    const v = readAnswer("server_state", serverState, await rpc.call("server_state")).state.validated_ledger;
    if (!v) throw new TransientChainError("xrp: the node has no validated ledger yet (server_state)");
    return { validatedLedger: v.seq, reserveBase: v.reserve_base, reserveInc: v.reserve_inc, baseFee: v.base_fee };
  }

  /** The fee our transactions pay: the open ledger's fee when above the base fee, never above the cap. */
  async function fee(base: bigint): Promise<bigint> {
    const open = readAnswer("fee", feeAnswer, await rpc.call("fee")).drops?.open_ledger_fee ?? base;
    const wanted = open > base ? open : base;
    if (base > MAX_FEE_DROPS) {
      throw new TransientChainError(`xrp: the base fee ${base} drops is above our cap of ${MAX_FEE_DROPS}`);
    }
    return wanted > MAX_FEE_DROPS ? MAX_FEE_DROPS : wanted;
  }

  async function account(address: string, ledger: "validated" | "current"): Promise<AccountFacts | null> {
    try {
      const r = await rpc.call("account_info", { account: address, ledger_index: ledger });
      const d = readAnswer("account_info", accountInfo, r).account_data;
      return { balance: d.Balance, ownerCount: BigInt(d.OwnerCount ?? 0), sequence: d.Sequence };
    } catch (err) {
      if (isXrplError(err, "actNotFound")) return null;
      throw err;
    }
  }

  /** What `address` must keep: the base reserve and one increment per object it owns. */
  const reserveOf = (facts: AccountFacts, net: XrpNetworkFacts) => net.reserveBase + facts.ownerCount * net.reserveInc;

  /**
   * The account's next Sequence: from the current (open) ledger, which counts our transactions the node has applied
   * but not yet validated, so payouts can follow each other within a ledger. A Sequence a recorded transaction holds
   * is refused by the recording atomic (the caller tries again later).
   */
  async function nextSequence(address: string): Promise<number> {
    const current = await account(address, "current");
    if (!current) throw new TransientChainError(`xrp: ${address} does not exist on the ledger: it cannot send`);
    return current.sequence;
  }

  async function sign(tx: Record<string, unknown>, index: number, branch: "deposit" | "hot"): Promise<PreparedTx> {
    const pub = bytesToHex(signer.publicKey("xrp", index, branch)).toUpperCase();
    const signing = { ...tx, SigningPubKey: pub } as unknown as Payment;
    const unsigned = encodeForSigning(signing);
    const digest = sha512Half(hexToBytes(unsigned));
    const sig = await signer.signDigest("xrp", index, digest, branch, { unsigned });
    if (sig.format !== "der") throw new Error("xrp: the signer must give a DER signature");
    const blob = encode({ ...signing, TxnSignature: bytesToHex(sig.bytes).toUpperCase() });
    const account = String(tx.Account);
    const sequence = Number(tx.Sequence);
    return {
      txHash: hashes.hashSignedTx(blob),
      raw: blob,
      expiry: { kind: "ledger", value: Number(tx.LastLedgerSequence) },
      consumes: { kind: "nonce", account, nonce: sequence },
      reservations: [{ kind: "sequence", chain: "xrp", account, sequence }],
    };
  }

  function checkAddress(address: string, what: string): void {
    if (typeof address !== "string" || !isValidClassicAddress(address)) {
      throw new RangeError(`${what} ${JSON.stringify(address)} is not an XRP Ledger classic address`);
    }
  }

  function checkAmount(amount: bigint): void {
    if (typeof amount !== "bigint" || amount <= 0n) {
      throw new RangeError("an XRP amount must be a positive number of drops");
    }
    if (amount > 100_000_000_000_000_000n) throw new RangeError(`${amount} drops is more XRP than exists`);
  }

  return {
    chain: "xrp",
    family: "account",
    hotWallet,
    hotIndex,
    atHotIndex: (index: number) => xrpPayer({ ...opts, hotIndex: index }),

    async checkPayout(req: PayoutRequest): Promise<PayoutCheck> {
      checkAddress(req.to, "the payout destination");
      checkAmount(req.amount);
      const net = await network();
      const dest = await account(req.to, "validated");
      if (!dest && req.amount < net.reserveBase) {
        return {
          ok: false,
          reason: "destination_below_reserve",
          detail: `${req.to} does not exist on the XRP Ledger and ${req.amount} drops is below the ${net.reserveBase}` +
            ` drops base reserve needed to create it`,
        };
      }
      const hot = await account(hotWallet, "validated");
      const feeDrops = await fee(net.baseFee);
      if (!hot) {
        return {
          ok: false,
          reason: "unfunded",
          detail: `the XRP hot wallet ${hotWallet} does not exist yet: it needs a ${net.reserveBase} drops reserve ` +
            `plus ${req.amount} drops and the fee (sweeps of deposits fund it)`,
        };
      }
      const spendable = hot.balance - reserveOf(hot, net) - feeDrops;
      if (spendable < req.amount) {
        return {
          ok: false,
          reason: "unfunded",
          detail: `the XRP hot wallet ${hotWallet} can spend ${spendable > 0n ? spendable : 0n} drops (balance ` +
            `${hot.balance} less its ${reserveOf(hot, net)} reserve and a ${feeDrops} fee); this payout needs ` +
            `${req.amount}`,
        };
      }
      return { ok: true, spendable, fee: feeDrops };
    },

    async preparePayout(req: PayoutRequest): Promise<PreparedTx> {
      checkAddress(req.to, "the payout destination");
      checkAmount(req.amount);
      const tag = destinationTagOf(req.memo);
      if (req.to === hotWallet) throw new RangeError("an XRP payout cannot go to the hot wallet itself");
      const net = await network();
      const sequence = await nextSequence(hotWallet);
      return await sign(
        {
          TransactionType: "Payment",
          Account: hotWallet,
          Destination: req.to,
          DestinationTag: tag,
          Amount: req.amount.toString(),
          Fee: (await fee(net.baseFee)).toString(),
          Sequence: sequence,
          LastLedgerSequence: net.validatedLedger + EXPIRY_WINDOW,
        },
        hotIndex,
        "hot",
      );
    },

    async prepareSweep(req: SweepRequest): Promise<PreparedTx> {
      const branch = req.branch ?? "deposit";
      await signer.loadKey?.("xrp", req.derivationIndex, branch);
      const from = signer.address("xrp", req.derivationIndex, branch);
      if (from !== req.from) {
        throw new RangeError(`${branch} address ${req.from} is not ours at derivation index ${req.derivationIndex}`);
      }
      if (from === hotWallet) throw new RangeError(`${from} is the hot wallet itself: nothing to sweep into it`);
      const net = await network();
      const facts = await account(from, "validated");
      if (!facts) throw new RangeError(`deposit address ${from} does not exist on the XRP Ledger: nothing to sweep`);
      const feeDrops = await fee(net.baseFee);
      // The address keeps its reserve (it cannot go below it); the fee comes out of what moves.
      const available = facts.balance - reserveOf(facts, net) - feeDrops;
      const amount = req.amount !== undefined && req.amount < available ? req.amount : available;
      if (amount <= 0n) {
        throw new RangeError(
          `deposit address ${from} holds ${facts.balance} drops: nothing above its ${reserveOf(facts, net)} reserve ` +
            `and the ${feeDrops} fee to sweep`,
        );
      }
      // A Payment below the base reserve to an account that does not exist fails on chain (tecNO_DST_INSUF_XRP) and
      // still takes its fee: refused here instead, nothing signed (a fresh hot wallet after a rotation is one).
      if (amount < net.reserveBase && !(await account(hotWallet, "validated"))) {
        throw new RangeError(
          `the XRP hot wallet ${hotWallet} does not exist yet and ${amount} drops are below the ${net.reserveBase} ` +
            "drops base reserve needed to create it",
        );
      }
      return await sign(
        {
          TransactionType: "Payment",
          Account: from,
          Destination: hotWallet,
          Amount: amount.toString(),
          Fee: feeDrops.toString(),
          Sequence: await nextSequence(from),
          LastLedgerSequence: net.validatedLedger + EXPIRY_WINDOW,
        },
        req.derivationIndex,
        branch,
      );
    },

    async broadcast(tx: PreparedTx): Promise<void> {
      const r = readAnswer("submit", submitAnswer, await rpc.call("submit", { tx_blob: tx.raw }));
      const code = r.engine_result;
      // Accepted, queued, held for an earlier Sequence, or applied as a failure that still takes the fee: sent.
      if (code === "tesSUCCESS" || code.startsWith("ter") || code.startsWith("tec") || code === "tefALREADY") return;
      if (code === "tefPAST_SEQ" || code === "tefMAX_LEDGER") {
        // Already applied (this very transaction used the Sequence) is success. Otherwise it can never apply, and
        // that is the ordinary way to its proof of death (a resend after downtime past its LastLedgerSequence):
        // transient for the caller, which waits for `txStatus` to prove it dead from the validated ledgers.
        if (await known(tx.txHash)) return;
        throw new TransientChainError(
          `xrp submit of ${tx.txHash} answered ${code}: ${r.engine_result_message ?? ""}; it can never apply, and ` +
            "is proven dead from the validated ledgers",
        );
      }
      if (code.startsWith("tel")) {
        throw new TransientChainError(`xrp submit of ${tx.txHash} answered ${code} (local to the node): will retry`);
      }
      throw new Error(`xrp submit of ${tx.txHash} answered ${code}: ${r.engine_result_message ?? ""}`);
    },

    async nudge(tx: PreparedTx): Promise<void> {
      // Same Sequence, same bytes: rippled relays it again if it fell out of the queue.
      await this.broadcast(tx);
    },
  };

  async function known(txHash: string): Promise<boolean> {
    try {
      await rpc.call("tx", { transaction: txHash, binary: false });
      return true;
    } catch (err) {
      if (isXrplError(err, "txnNotFound")) return false;
      throw err;
    }
  }
}
