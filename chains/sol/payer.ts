/**
 * The live Solana payer: payouts from the hot wallet (signer branch "hot", the index in effect), sweeps of deposit addresses into
 * it. Every transaction carries a recent blockhash read at `finalized`, whose `lastValidBlockHeight` is its recorded
 * expiry: past it (finalized height above, signature unknown) the reader proves it dead, and only then is a new one
 * signed. Solana transactions consume no nonce, so there is nothing to reserve.
 *
 * Rent: an account holds either 0 lamports or at least the rent-exempt minimum (`getMinimumBalanceForRentExemption(0)`,
 * read from the node), or the transaction fails. Hence: a payout to an empty account must deliver at least that
 * (`destination_below_reserve`), the hot wallet keeps it (`unfunded` otherwise), and a sweep moves the whole balance
 * less the fee, closing the deposit account at 0, or leaves at least the minimum (the sweeper leaves the catalog's
 * reserve: `req.amount` is what leaves the address, its fee included).
 */
import type { Address } from "@solana/kit";
import { base64 } from "@scure/base";
import type { AccountPayer, PayoutCheck, PayoutRequest, PreparedTx, SweepRequest } from "../adapter.ts";
import type { AccountAdapterOptions } from "../adapter.ts";
import { balanceAnswer, latestBlockhashAnswer, rentAnswer, solAnswer } from "./answers.ts";
import { SOL_RPC_CODES, type SolRpc, SolRpcError, unwrap } from "./rpc.ts";
import { buildTransfer, LAMPORTS_PER_SIGNATURE, solAddress, type TransferSpec } from "./tx.ts";

const FINALIZED = { commitment: "finalized" } as const;

export function solPayer(
  rpc: SolRpc,
  signer: AccountAdapterOptions["signer"],
  hotIndex = 0,
): AccountPayer & { readonly hotWallet: string } {
  const hotWallet = solAddress(signer.address("sol", hotIndex, "hot"), "hot wallet");

  /** Balances of `addresses` at finalized, the rent-exempt minimum and a recent blockhash, in one request. */
  async function read(addresses: Address[], withBlockhash: boolean) {
    const answers = await rpc.batch([
      ...addresses.map((a) => ({ method: "getBalance", params: [a, FINALIZED] })),
      { method: "getMinimumBalanceForRentExemption", params: [0, FINALIZED] },
      ...(withBlockhash ? [{ method: "getLatestBlockhash", params: [FINALIZED] }] : []),
    ]);
    const balances = addresses.map((_, i) => solAnswer("getBalance", balanceAnswer, unwrap(answers[i])).value ?? 0n);
    const rent = solAnswer("getMinimumBalanceForRentExemption", rentAnswer, unwrap(answers[addresses.length]));
    const latest = withBlockhash
      ? solAnswer("getLatestBlockhash", latestBlockhashAnswer, unwrap(answers[addresses.length + 1])).value
      : undefined;
    return { balances, rent, latest };
  }

  function prepared(signed: { signature: string; wire: string }, lastValidBlockHeight: number): PreparedTx {
    return {
      txHash: signed.signature,
      raw: signed.wire,
      expiry: { kind: "height", value: lastValidBlockHeight },
    };
  }

  async function checkPayout(req: PayoutRequest): Promise<PayoutCheck> {
    const to = solAddress(req.to, "payout destination");
    const { balances: [destination, hot], rent } = await read([to, hotWallet], false);
    if (destination === 0n && req.amount < rent) {
      return {
        ok: false,
        reason: "destination_below_reserve",
        detail: `${to} holds no SOL, and a new Solana account needs at least ${rent} lamports (the rent-exempt ` +
          `minimum); ${req.amount} lamports would be refused by the chain`,
      };
    }
    const fee = LAMPORTS_PER_SIGNATURE;
    if (hot - fee - rent < req.amount) {
      return {
        ok: false,
        reason: "unfunded",
        detail: `the sol hot wallet ${hotWallet} holds ${hot} lamports; paying ${req.amount} needs that plus the ` +
          `${fee} lamport fee and the ${rent} lamports it must keep (rent-exempt minimum)`,
      };
    }
    return { ok: true, spendable: hot - fee - rent, fee };
  }

  async function preparePayout(req: PayoutRequest): Promise<PreparedTx> {
    const to = solAddress(req.to, "payout destination");
    if (req.amount <= 0n) throw new Error(`sol payout ${req.orderId}: the amount must be positive, not ${req.amount}`);
    const { latest } = await read([], true);
    const signed = await signedTransfer(
      {
        from: hotWallet,
        to,
        lamports: req.amount,
        memos: [...(req.memo ? [req.memo] : []), `payout ${req.orderId}`],
        blockhash: latest!.blockhash,
        lastValidBlockHeight: BigInt(latest!.lastValidBlockHeight),
      },
      hotIndex,
      "hot",
    );
    return prepared(signed, latest!.lastValidBlockHeight);
  }

  /** The message is what ed25519 signs, so it is also the unsigned transaction the signer process decodes. */
  async function signedTransfer(spec: Omit<TransferSpec, "sign">, index: number, branch: "deposit" | "hot") {
    const built = buildTransfer(spec);
    const unsigned = base64.encode(built.message);
    return built.finish(await signer.signMessage("sol", index, built.message, branch, { unsigned }));
  }

  async function prepareSweep(req: SweepRequest): Promise<PreparedTx> {
    const branch = req.branch ?? "deposit";
    await signer.loadKey?.("sol", req.derivationIndex, branch);
    const from = solAddress(signer.address("sol", req.derivationIndex, branch), `${branch} address`);
    if (from !== req.from) {
      throw new Error(`sol sweep ${req.sweepId}: ${branch} key ${req.derivationIndex} is ${from}, not ${req.from}`);
    }
    if (from === hotWallet) throw new Error(`sol sweep ${req.sweepId}: ${from} is the hot wallet itself`);
    const { balances: [balance, hot], rent, latest } = await read([from, hotWallet], true);
    const fee = LAMPORTS_PER_SIGNATURE;
    // `amount` is what leaves the deposit address, the fee included (actors/sweeper.ts asks for its balance less the
    // reserve); absent, the whole balance leaves and the account closes at 0, which rent allows.
    const leaving = req.amount ?? balance;
    const lamports = leaving - fee;
    if (lamports <= 0n) {
      throw new Error(`sol sweep ${req.sweepId}: ${leaving} lamports leaving ${from} do not cover the ${fee} fee`);
    }
    // The runtime takes the fee before running anything and refuses a fee payer left between 0 and the rent-exempt
    // minimum by it (InsufficientFundsForRent, account 0), even when the transfer would then close the account.
    if (balance - fee < rent) {
      throw new Error(
        `sol sweep ${req.sweepId}: ${from} holds ${balance} lamports; paying its own ${fee} lamport fee would leave ` +
          `it below the rent-exempt minimum ${rent}, which the chain refuses: nothing can be swept from it`,
      );
    }
    const left = balance - leaving;
    if (left < 0n) {
      throw new Error(`sol sweep ${req.sweepId}: ${from} holds ${balance} lamports, less than the ${leaving} asked`);
    }
    if (left > 0n && left < rent) {
      throw new Error(
        `sol sweep ${req.sweepId}: it would leave ${left} lamports at ${from}, below the rent-exempt minimum ${rent}`,
      );
    }
    if (hot === 0n && lamports < rent) {
      throw new Error(
        `sol sweep ${req.sweepId}: the hot wallet ${hotWallet} does not exist yet and ${lamports} lamports are below ` +
          `the ${rent} needed to create it`,
      );
    }
    const signed = await signedTransfer(
      {
        from,
        to: hotWallet,
        lamports,
        memos: [`sweep ${req.sweepId}`],
        blockhash: latest!.blockhash,
        lastValidBlockHeight: BigInt(latest!.lastValidBlockHeight),
      },
      req.derivationIndex,
      branch,
    );
    return prepared(signed, latest!.lastValidBlockHeight);
  }

  async function broadcast(tx: PreparedTx): Promise<void> {
    try {
      await rpc.call("sendTransaction", [tx.raw, { encoding: "base64", skipPreflight: true }]);
    } catch (err) {
      // The same bytes again: the node already has them, which is what we wanted.
      if (err instanceof SolRpcError && /already been processed|AlreadyProcessed/i.test(err.message)) return;
      if (err instanceof SolRpcError && err.code === SOL_RPC_CODES.sendTransactionPreflightFailure) {
        throw new Error(`sol: the node refused transaction ${tx.txHash}: ${err.message}`);
      }
      throw err;
    }
  }

  return {
    chain: "sol",
    family: "account",
    hotWallet,
    hotIndex,
    atHotIndex: (index) => solPayer(rpc, signer, index),
    checkPayout,
    preparePayout,
    prepareSweep,
    broadcast,
    // Solana drops what a leader did not include: re-sending the same bytes is the nudge; never a new transaction.
    nudge: (tx) => broadcast(tx),
  };
}
