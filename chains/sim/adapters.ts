/**
 * The sim-mode `Chains`: readers, minters and payers over the embedded `SimLedger`s. Every call first rolls the
 * chain's `rpcErrorRate` and may throw `TransientChainError` without reaching the ledger, which is how the pipeline's
 * retries get exercised. Prepared transactions carry a random nonce, so preparing the same request twice gives two
 * different transactions: exactly the hazard write-ahead recording (DESIGN.md invariant 2) exists for.
 *
 * Payouts on sol, xrp, sui and zec carry the expiry their live chain would set (ledger.ts `SIM_PAYOUT_EXPIRY`), and
 * the reader proves an expired one dead. Coins a payout request names are consumed and reserved as a UTXO chain's
 * would be (the sim has no UTXO set yet: they are locked in KV, not checked against a ledger). On the account chains
 * (sol, xrp, sui) the hot wallet is finite when the process sets a small genesis: a payout it cannot fund is refused
 * (`checkPayout` says so first), sweeps of deposit addresses fund it (`prepareSweep`, its balance less the catalog's
 * reserve), and `checkPayout` refuses a payout too small to create its destination account. The sim charges no fee. Finality is depth for every sim chain:
 * `included.final` is left unset.
 */
import {
  type ChainReader,
  type Chains,
  type ChainSender,
  type EvmMinter,
  type NativePayer,
  type PayoutCheck,
  type PayoutRequest,
  type PreparedTx,
  TransientChainError,
} from "../adapter.ts";
import {
  type ChainSymbol,
  type EvmChain,
  isAccountChain,
  isEvmChain,
  isNativeChain,
  NATIVE,
  type NativeChain,
} from "../catalog.ts";
import { encodeSimTx, parseSimTx, SimLedger, simNonce, simPayoutExpiry, type SimTx, simTxHash } from "./ledger.ts";

export interface SimChainsOptions {
  /** Drives injected RPC errors, nonces and block salts; inject for reproducible tests. */
  random?: () => number;
  /** The operator hot wallet payouts are sent from; funded by the ledger at its first payout. */
  operatorAddress?: (chain: NativeChain) => string;
  /** The clock of stalls (`stalledUntil`) and of the pending set's order. */
  now?: () => number;
  /** What a hot wallet is credited at its first payout (ledger.ts `HOT_WALLET_GENESIS` when unset; 0: finite). */
  hotWalletGenesis?: bigint;
}

/** `Chains` plus direct access to each ledger, for the block producer, the sim routes and tests. */
export interface SimChains extends Chains {
  ledger(chain: ChainSymbol): SimLedger;
}

/** Used when no operator address is configured: sim does not check native address formats. */
export function defaultSimOperatorAddress(chain: NativeChain): string {
  return `sim-${chain}-hot-wallet`;
}

export function simChains(kv: Deno.Kv, opts: SimChainsOptions = {}): SimChains {
  const random = opts.random ?? Math.random;
  const operatorAddress = opts.operatorAddress ?? defaultSimOperatorAddress;
  const ledgers = new Map<ChainSymbol, SimLedger>();
  const ledger = (chain: ChainSymbol): SimLedger => {
    let l = ledgers.get(chain);
    if (!l) {
      ledgers.set(
        chain,
        l = new SimLedger(kv, chain, { random, now: opts.now, hotWalletGenesis: opts.hotWalletGenesis }),
      );
    }
    return l;
  };

  /** Runs `call` unless the roll against the chain's `rpcErrorRate` says the RPC failed. */
  async function rpc<T>(l: SimLedger, what: string, call: () => T | Promise<T>): Promise<T> {
    const { rpcErrorRate } = await l.getFaults();
    if (rpcErrorRate > 0 && random() < rpcErrorRate) {
      throw new TransientChainError(`sim ${l.chain}: injected RPC error in ${what}`);
    }
    return await call();
  }

  /** Validates like the ledger will, and hashes without submitting. */
  function prepare(chain: ChainSymbol, tx: SimTx): PreparedTx {
    const raw = encodeSimTx(tx);
    parseSimTx(chain, raw);
    return { txHash: simTxHash(chain, raw), raw };
  }

  /** The hot wallet's funds less its reserve cover the amount; a new destination gets at least the reserve. */
  async function checkPayout(l: SimLedger, chain: NativeChain, req: PayoutRequest): Promise<PayoutCheck> {
    const reserve = NATIVE[chain].reserve;
    if (req.amount < reserve && (await l.balance(req.to, "native")) === 0n) {
      return {
        ok: false,
        reason: "destination_below_reserve",
        detail: `${req.to} does not exist on ${chain} and ${req.amount} is below the ${reserve} reserve`,
      };
    }
    const payable = await l.payable(operatorAddress(chain));
    if (payable < req.amount) {
      return { ok: false, reason: "unfunded", detail: `hot wallet cannot fund this payout yet (${chain})` };
    }
    return { ok: true };
  }

  function sender(l: SimLedger): ChainSender {
    return {
      chain: l.chain,
      broadcast: (tx: PreparedTx) =>
        rpc(l, "broadcast", async () => {
          const { txHash } = await l.submitRaw(tx.raw);
          if (txHash !== tx.txHash) {
            throw new Error(`sim ${l.chain}: broadcast hash ${txHash} differs from prepared ${tx.txHash}`);
          }
        }),
    };
  }

  return {
    ledger,

    reader(chain: ChainSymbol): ChainReader {
      const l = ledger(chain);
      return {
        chain,
        finality: { kind: "depth" },
        tip: () => rpc(l, "tip", () => l.head()),
        blockHash: (n) => rpc(l, "blockHash", () => l.blockHash(n)),
        scan: (from, to) => rpc(l, "scan", () => l.blocks(from, to)),
        txStatus: (hash, ours) => rpc(l, "txStatus", () => l.txStatus(hash, ours)),
        transfersOf: (hash) => rpc(l, "transfersOf", () => l.txTransfers(hash)),
        ...(isNativeChain(chain) && isAccountChain(chain)
          ? { balance: (address: string) => rpc(l, "balance", () => l.balance(address, "native")) }
          : {}),
      };
    },

    minter(chain: EvmChain): EvmMinter {
      if (!isEvmChain(chain)) throw new Error(`${chain} is not an EVM chain: it has no uAsset minter`);
      const l = ledger(chain);
      return {
        ...sender(l),
        prepareMint: (req) =>
          rpc(l, "prepareMint", () =>
            prepare(chain, {
              kind: "mint",
              to: req.to,
              asset: req.asset,
              amount: req.amountWei,
              depositId: req.depositId,
              nonce: simNonce(random),
            })),
        mintedBy: (depositId) => rpc(l, "mintedBy", () => l.mintedBy(depositId)),
      };
    },

    payer(chain: NativeChain): NativePayer {
      if (!isNativeChain(chain)) throw new Error(`${chain} is not a native chain: it has no payer`);
      const l = ledger(chain);
      return {
        ...sender(l),
        preparePayout: (req) =>
          rpc(l, "preparePayout", async () => {
            const expiry = simPayoutExpiry(chain, (await l.head()).number);
            const tx = prepare(chain, {
              kind: "payout",
              from: operatorAddress(chain),
              to: req.to,
              amount: req.amount,
              memo: req.memo,
              orderId: req.orderId,
              nonce: simNonce(random),
              expiry: expiry ?? null,
            });
            if (expiry) tx.expiry = expiry;
            if (req.coins && req.coins.length > 0) {
              tx.consumes = { kind: "outpoints", outpoints: req.coins };
              tx.reservations = [{ kind: "coins", chain, outpoints: req.coins }];
            }
            return tx;
          }),
        ...(isAccountChain(chain)
          ? {
            hotWallet: operatorAddress(chain),
            checkPayout: (req: PayoutRequest) => rpc(l, "checkPayout", () => checkPayout(l, chain, req)),
            prepareSweep: (req) =>
              rpc(l, "prepareSweep", async () => {
                const reserve = NATIVE[chain].reserve;
                const amount = req.amount ?? (await l.balance(req.from, "native")) - reserve;
                if (amount <= 0n) throw new RangeError(`sim ${chain}: nothing above the reserve to sweep`);
                const expiry = simPayoutExpiry(chain, (await l.head()).number);
                const tx = prepare(chain, {
                  kind: "sweep",
                  from: req.from,
                  to: operatorAddress(chain),
                  amount,
                  sweepId: req.sweepId,
                  nonce: simNonce(random),
                  expiry: expiry ?? null,
                });
                if (expiry) tx.expiry = expiry;
                return tx;
              }),
          }
          : {}),
      };
    },
  };
}
