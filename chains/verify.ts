/**
 * Verify before record (chains/effects.ts): every transaction an adapter prepares is decoded from its own signed bytes
 * by the chain's library and compared with the request before the caller sees it. A mismatch throws
 * `TransactionMismatchError` from `prepare*`, so the caller records nothing and broadcasts nothing (its step fails and
 * waits with backoff, as any failed step does), and `onMismatch` raises the alert that names the difference.
 *
 * One wrapper for every purpose that signs: mints (`EvmMinter.prepareMint`), payouts, refunds of native coins and
 * UTXO consolidations (`UtxoPayer`/`AccountPayer.preparePayout`), sweeps (`AccountPayer.prepareSweep`), and the transfer address's burns and
 * refunds (`UAssetSender.prepareBurn`, `prepareTransfer`). Replacements an adapter signs itself (an EVM fee bump in
 * `nudge`) are not seen here: chains/evm/tx_sender.ts reads each back against the version it replaces before
 * recording it (`replacementDifferences`), and the driver (actors/sent_tx.ts) alerts on a refusal.
 */
import {
  type AccountPayer,
  type Chains,
  type EvmMinter,
  type MintRequest,
  type NativePayer,
  type PayerOf,
  type PayoutRequest,
  type PreparedTx,
  type SweepRequest,
  type UAssetSender,
  type UtxoPayer,
  type UtxoPayoutRequest,
} from "./adapter.ts";
import type { ChainSymbol, EvmChain, NativeChain, UAsset } from "./catalog.ts";
import { differences, TransactionMismatchError, type TxEffects, type TxIntent } from "./effects.ts";

/** How one chain's prepared transactions are read back (chains/<family>/explain.ts) and what they must carry. */
export interface Explainer {
  explain(raw: string): Promise<TxEffects>;
  /**
   * The memo a payout asked with `memo` carries in its bytes: the XRPL destination tag in its decimal form, a Solana
   * memo as given, and null where our payer puts none on chain (Sui, Dogecoin, Zcash keep it for the partner only).
   */
  memoOnChain(memo: string | null): string | null;
  /** UTXO chains: the most a payout spending `inputs` coins may pay in fee (the coin selection's rule). */
  maxFee?(inputs: number): bigint;
  /** Further checks of the record beside the bytes (its hash, what it consumes), where the family has them. */
  record?(prepared: PreparedTx, effects: TxEffects): string[];
}

/** What the intents of one EVM chain's transactions name besides the request: who signs, where, which contracts. */
export interface EvmFacts {
  chainId: number;
  /** The minter's account. */
  minter: string;
  /** The transfer address (signs burns and refunds). */
  transferAddress: string;
  contract(asset: UAsset): string;
}

export interface VerifyOptions {
  /** The decoder of each chain; a chain without one is not wrapped (its `prepare*` answer as before). */
  explainer(chain: ChainSymbol): Explainer | undefined;
  evm(chain: EvmChain): EvmFacts | undefined;
  /**
   * Told of every refused transaction before the error is thrown (the registry raises an alert); `subject` names what
   * it was for (the deposit id, order, sweep, batch or refund), so a repeated refusal counts on one alert.
   */
  onMismatch(err: TransactionMismatchError, subject: string): Promise<void>;
}

/** `chains` with every `prepare*` checked against its own bytes. */
export function verifyingChains(chains: Chains, opts: VerifyOptions): Chains {
  const minters = new Map<EvmChain, EvmMinter>();
  const payers = new Map<NativeChain, NativePayer>();
  const senders = new Map<EvmChain, UAssetSender>();
  const out: Chains = {
    ...chains,
    reader: (c) => chains.reader(c),
    minter: (c) => cached(minters, c, () => verifyingMinter(chains.minter(c), c, opts)),
    // The wrapper keeps the inner payer's family, so it is the `PayerOf` the chain's family says.
    payer: <C extends NativeChain>(c: C) =>
      cached(payers, c, () => verifyingPayer(chains.payer<NativeChain>(c), c, opts)) as PayerOf<C>,
  };
  const uAssetSender = chains.uAssetSender;
  if (uAssetSender) {
    out.uAssetSender = (c) => cached(senders, c, () => verifyingSender(uAssetSender(c), c, opts));
  }
  return out;
}

function cached<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (!v) map.set(key, v = make());
  return v;
}

/** Checks `prepared` against `intent`: returns it when its bytes do what was asked, else throws after `onMismatch`. */
export async function verifyPrepared(
  explainer: Explainer,
  intent: TxIntent,
  prepared: PreparedTx,
  subject: string,
  onMismatch: VerifyOptions["onMismatch"],
): Promise<PreparedTx> {
  let found: string[];
  try {
    const effects = await explainer.explain(prepared.raw);
    found = [...differences(intent, effects, prepared), ...(explainer.record?.(prepared, effects) ?? [])];
  } catch (err) {
    found = [`cannot be read back: ${err instanceof Error ? err.message : String(err)}`];
  }
  if (found.length === 0) return prepared;
  const err = new TransactionMismatchError(intent, prepared.txHash, found);
  await onMismatch(err, subject);
  throw err;
}

/** `inner` with `overrides` in place of some of its methods; every other member read from `inner` itself. */
function withOverrides<T extends object>(inner: T, overrides: Partial<T>): T {
  return new Proxy(inner, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop as keyof T];
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function verifyingMinter(inner: EvmMinter, chain: EvmChain, opts: VerifyOptions): EvmMinter {
  const explainer = opts.explainer(chain);
  const facts = opts.evm(chain);
  if (!explainer || !facts) return inner;
  return withOverrides(inner, {
    prepareMint: async (req: MintRequest) => {
      const prepared = await inner.prepareMint(req);
      const intent: TxIntent = {
        kind: "mint",
        chain,
        chainId: facts.chainId,
        from: facts.minter,
        contract: facts.contract(req.asset),
        asset: req.asset,
        depositId: req.depositId,
        to: req.to,
        amount: req.amountWei,
      };
      return await verifyPrepared(explainer, intent, prepared, `mint:${req.depositId}`, opts.onMismatch);
    },
  });
}

function verifyingSender(inner: UAssetSender, chain: EvmChain, opts: VerifyOptions): UAssetSender {
  const explainer = opts.explainer(chain);
  const facts = opts.evm(chain);
  if (!explainer || !facts) return inner;
  const base = { chain, chainId: facts.chainId, from: facts.transferAddress };
  return withOverrides(inner, {
    prepareBurn: async (req: Parameters<UAssetSender["prepareBurn"]>[0]) => {
      const intent: TxIntent = {
        ...base,
        kind: "burn",
        contract: facts.contract(req.asset),
        asset: req.asset,
        amount: req.amount,
      };
      const prepared = await inner.prepareBurn(req);
      return await verifyPrepared(explainer, intent, prepared, `burn:${req.batchId}`, opts.onMismatch);
    },
    prepareTransfer: async (req: Parameters<UAssetSender["prepareTransfer"]>[0]) => {
      const intent: TxIntent = {
        ...base,
        kind: "transfer",
        contract: facts.contract(req.asset),
        asset: req.asset,
        to: req.to,
        amount: req.amount,
      };
      const prepared = await inner.prepareTransfer(req);
      return await verifyPrepared(explainer, intent, prepared, `refund:${req.refundId}`, opts.onMismatch);
    },
  });
}

function verifyingPayer(inner: NativePayer, chain: NativeChain, opts: VerifyOptions): NativePayer {
  const explainer = opts.explainer(chain);
  if (!explainer) return inner;
  const payout = (req: PayoutRequest, spends: Partial<Extract<TxIntent, { kind: "payout" }>>): TxIntent => ({
    kind: "payout",
    chain,
    to: req.to,
    amount: req.amount,
    memo: explainer.memoOnChain(req.memo),
    ...spends,
  });
  if (inner.family === "utxo") {
    // UTXO payouts and consolidations: exactly the coins given, change only to our change address (of the payer in
    // effect: `atChangeIndex` is checked the same way against its own).
    const atChangeIndex = inner.atChangeIndex?.bind(inner);
    return withOverrides<UtxoPayer>(inner, {
      ...(atChangeIndex
        ? { atChangeIndex: (index: number) => verifyingPayer(atChangeIndex(index), chain, opts) as UtxoPayer }
        : {}),
      preparePayout: async (req: UtxoPayoutRequest) => {
        const prepared = await inner.preparePayout(req);
        const intent = payout(
          req,
          req.coins
            ? {
              coins: req.coins.map((c) => ({ txHash: c.txHash, index: c.index, amount: c.amount })),
              changeAddress: inner.changeAddress ?? undefined,
              maxFee: explainer.maxFee?.(req.coins.length),
            }
            : {},
        );
        return await verifyPrepared(explainer, intent, prepared, `payout:${req.orderId}`, opts.onMismatch);
      },
    });
  }
  // Account chains: payouts from the hot wallet, sweeps into it (a payer that cannot sign has none: not checked).
  const hotWallet = inner.hotWallet ?? undefined;
  const overrides: Partial<AccountPayer> = {
    preparePayout: async (req: PayoutRequest) => {
      const prepared = await inner.preparePayout(req);
      const intent = payout(req, { from: hotWallet });
      return await verifyPrepared(explainer, intent, prepared, `payout:${req.orderId}`, opts.onMismatch);
    },
  };
  if (hotWallet !== undefined) {
    overrides.prepareSweep = async (req: SweepRequest) => {
      const intent: TxIntent = { kind: "sweep", chain, from: req.from, to: hotWallet };
      const prepared = await inner.prepareSweep(req);
      return await verifyPrepared(explainer, intent, prepared, `sweep:${req.sweepId}`, opts.onMismatch);
    };
  }
  // A rotated hot wallet's payer (docs/operations.md "Rotating a hot wallet") is checked the same way against its own
  // wallet.
  const atHotIndex = inner.atHotIndex?.bind(inner);
  if (atHotIndex) {
    overrides.atHotIndex = (index: number) => verifyingPayer(atHotIndex(index), chain, opts) as AccountPayer;
  }
  return withOverrides<AccountPayer>(inner, overrides);
}
