/**
 * What `deno task admin treasury --chain sol|xrp|sui` shows: the hot wallet (its address and balance, read through the
 * chain's reader, so in live mode this asks the node; in sim mode the sim ledger), the deposits swept into it and those
 * still waiting for their sweep (kv/treasury.ts sweep records and sweep-due marks: counts, amounts, the oldest wait),
 * the open sweeps, and the payouts: burns waiting in `processing` with whether the hot wallet can fund each now (the
 * payer's `checkPayout`, asked for each alone), and burns whose payout is recorded but not yet counted, with their age.
 */
import type { Chains, PayoutCheck } from "../chains/adapter.ts";
import { type AccountChain, NATIVE, weiToNative } from "../chains/catalog.ts";
import { formatError } from "../chains/shared/redact.ts";
import { displayAmount, nativeUnit } from "../model/amounts.ts";
import { getOrder } from "../kv/orders.ts";
import { listSweeps, type PayoutObservation, type SweepDue } from "../kv/treasury.ts";
import { ageSince, formatAge, ordersIn, stuckPayoutsOf } from "./treasury_report.ts";
import { fundsAfterHolds, readHotWalletHolds } from "../kv/hot_wallet.ts";
import { hotWalletsOf, payerAtHotIndex } from "./hot_wallet_in_effect.ts";

export interface AccountTreasuryReport {
  chain: AccountChain;
  at: string;
  hotWallet: {
    address: string | null;
    /** Smallest units, a decimal string; null when it could not be read (`balanceError` says why). */
    balance: string | null;
    balanceError?: string;
    /** What the chain makes an account keep (xrp base reserve, sol rent-exempt minimum): not spendable. */
    reserve: string;
    /** What recorded payouts not yet final will take (kv/hot_wallet.ts): amount plus fee each, and how many. */
    held: { count: number; amount: string };
    /** Its derivation index (docs/operations.md "Rotating a hot wallet"). */
    index: number;
  };
  /** Hot wallets rotated out: their balance is still ours (the reserve for good, the rest until drained). */
  retiredWallets: {
    index: number;
    address: string;
    status: "draining" | "drained";
    balance: string | null;
    drainTxHash: string | null;
  }[];
  /**
   * Completed sweeps: what left the deposit addresses (`amount`, fees included), and of that the fees recorded (sweeps
   * completed before fees were recorded count none here; reconciliation reads theirs from the chain).
   */
  swept: { count: number; amount: string; fees: string };
  unswept: {
    count: number;
    amount: string;
    /** The deposit waiting longest for its sweep, since its mint completed. */
    oldest: { orderId: string; mintedAt: string; ageMs: number; age: string } | null;
    deposits: { orderId: string; amount: string; source: string; mintedAt: string; age: string; deadSweeps: number }[];
  };
  openSweeps: {
    sweepId: string;
    from: string;
    amount: string;
    leave: string;
    txHash: string;
    preparedAt: string;
    age: string;
  }[];
  deadSweeps: number;
  /** Stored sweeps failing their schema (each with its key and bad fields), counted nowhere: present when any. */
  invalidSweeps?: string[];
  pendingPayouts: {
    orderId: string;
    amount: string;
    to: string;
    heldReason?: string;
    waitingSince: string;
    age: string;
    fundable: boolean;
    why?: string;
  }[];
  stuckPayouts: {
    orderId: string;
    txHash: string;
    amount: string;
    recordedAt: string;
    ageMs: number;
    age: string;
    lastStatus: PayoutObservation | null;
  }[];
}

export async function accountTreasuryReport(
  kv: Deno.Kv,
  chains: Chains,
  chain: AccountChain,
  now = new Date(),
): Promise<AccountTreasuryReport> {
  // Read before the payer's answers, as the order actor does (kv/hot_wallet.ts): a pending payout is fundable now only
  // if the hot wallet in effect can pay it once every recorded, not yet final payout from it is counted.
  const holds = await readHotWalletHolds(kv, chain);
  const payer = payerAtHotIndex(chains, chain, holds.hotIndex);
  const reader = chains.reader(chain);
  const address = payer.hotWallet;
  let balance: string | null = null;
  let balanceError: string | undefined;
  if (address === null) balanceError = `the ${chain} payer has no hot wallet`;
  else if (!reader.balance) balanceError = `the ${chain} reader cannot read balances`;
  else {
    try {
      balance = (await reader.balance(address)).toString();
    } catch (err) {
      balanceError = formatError(err).split("\n")[0];
    }
  }

  let sweptCount = 0, sweptAmount = 0n, sweptFees = 0n, deadSweeps = 0;
  const openSweeps: AccountTreasuryReport["openSweeps"] = [];
  const listed = await listSweeps(kv, chain);
  for (const s of listed.sweeps) {
    if (s.status === "completed") {
      sweptCount++;
      sweptAmount += BigInt(s.amount);
      sweptFees += BigInt(s.fee ?? "0");
    } else if (s.status === "dead") deadSweeps++;
    else {
      openSweeps.push({
        sweepId: s.sweepId,
        from: s.from.address,
        amount: s.amount,
        leave: s.leave,
        txHash: s.txHash,
        preparedAt: s.preparedAt,
        age: formatAge(ageSince(s.preparedAt, now)),
      });
    }
  }

  const deposits: AccountTreasuryReport["unswept"]["deposits"] = [];
  let unsweptAmount = 0n;
  let oldest: AccountTreasuryReport["unswept"]["oldest"] = null;
  for await (const e of kv.list<SweepDue>({ prefix: ["treasury_sweep_due", chain] })) {
    const due = e.value;
    const mint = await getOrder(kv, due.orderId);
    const order = mint.versionstamp !== null && !mint.invalid ? mint.value : null;
    const amount = order ? BigInt(order.amount) : 0n;
    const mintedAt = order ? order.updatedAt ?? order.createdAt : "";
    const ageMs = mintedAt ? ageSince(mintedAt, now) : 0;
    unsweptAmount += amount;
    deposits.push({
      orderId: due.orderId,
      amount: amount.toString(),
      source: `${due.source.txHash}:${due.source.index}`,
      mintedAt,
      age: formatAge(ageMs),
      deadSweeps: due.deadSweeps,
    });
    if (mintedAt && (oldest === null || ageMs > oldest.ageMs)) {
      oldest = { orderId: due.orderId, mintedAt, ageMs, age: formatAge(ageMs) };
    }
  }

  const retiredWallets: AccountTreasuryReport["retiredWallets"] = [];
  for (const r of (await hotWalletsOf({ kv, chains }, chain)).retired) {
    let retiredBalance: string | null = null;
    try {
      if (reader.balance) retiredBalance = (await reader.balance(r.address)).toString();
    } catch {
      // Shown as unknown; reconciliation names the failure.
    }
    retiredWallets.push({
      index: r.index,
      address: r.address,
      status: r.status,
      balance: retiredBalance,
      drainTxHash: r.attempt?.txHash ?? r.drainTxHash ?? null,
    });
  }

  const pendingPayouts: AccountTreasuryReport["pendingPayouts"] = [];
  for (const o of await ordersIn(kv, "processing", (o) => o.type === "burn" && o.destinationChain === chain)) {
    if (o.type !== "burn") continue;
    const amount = weiToNative(chain, BigInt(o.amount)).native;
    let check: PayoutCheck;
    try {
      check = await payer.checkPayout({
        orderId: o.id,
        to: o.destinationWallet,
        amount,
        memo: o.details.memo,
      });
    } catch (err) {
      check = { ok: false, reason: "unfunded", detail: `could not ask: ${formatError(err).split("\n")[0]}` };
    }
    const heldBack = check.ok ? fundsAfterHolds(chain, check, holds, amount) : null;
    if (heldBack !== null) check = { ok: false, reason: "unfunded", detail: heldBack };
    const since = o.updatedAt ?? o.createdAt;
    pendingPayouts.push({
      orderId: o.id,
      amount: amount.toString(),
      to: o.destinationWallet,
      ...(o.details.heldReason ? { heldReason: o.details.heldReason } : {}),
      waitingSince: since,
      age: formatAge(ageSince(since, now)),
      fundable: check.ok,
      ...(check.ok ? {} : { why: check.detail }),
    });
  }

  const stuckPayouts: AccountTreasuryReport["stuckPayouts"] = (await stuckPayoutsOf(kv, chain, now)).map(
    ({ consumes: _consumes, ...p }) => p,
  );

  return {
    chain,
    at: now.toISOString(),
    hotWallet: {
      address,
      balance,
      ...(balanceError ? { balanceError } : {}),
      reserve: NATIVE[chain].reserve.toString(),
      held: { count: holds.count, amount: holds.held.toString() },
      index: holds.hotIndex,
    },
    retiredWallets,
    swept: { count: sweptCount, amount: sweptAmount.toString(), fees: sweptFees.toString() },
    unswept: { count: deposits.length, amount: unsweptAmount.toString(), oldest, deposits },
    openSweeps,
    deadSweeps,
    ...(listed.invalid.length > 0 ? { invalidSweeps: listed.invalid.map((e) => e.message) } : {}),
    pendingPayouts,
    stuckPayouts,
  };
}

/** The report as lines for people. */
export function accountTreasuryText(r: AccountTreasuryReport): string[] {
  const h = r.hotWallet;
  // Human units (model/amounts.ts); the exact integers are in `--json`.
  const $ = (v: string) => displayAmount(v, nativeUnit(r.chain));
  const lines = [
    `treasury ${r.chain} at ${r.at} (exact smallest units with --json)`,
    `hot wallet ${h.address ?? "(none)"} (index ${h.index}): balance ${
      h.balance === null ? `unknown (${h.balanceError})` : $(h.balance)
    }; reserve ${$(h.reserve)}`,
    `held by recorded payouts not yet final: ${h.held.count}, ${$(h.held.amount)}`,
    ...r.retiredWallets.map((w) =>
      `retired hot wallet ${w.address} (index ${w.index}): ${w.status}, balance ${
        w.balance === null ? "unknown" : $(w.balance)
      }` +
      (w.drainTxHash ? `, drain ${w.drainTxHash}` : "")
    ),
    `swept deposits: ${r.swept.count}, ${$(r.swept.amount)} moved to the hot wallet (sweep fees included: ` +
    `${$(r.swept.fees)} recorded)`,
    `unswept deposits (minted, waiting for their sweep): ${r.unswept.count}, ${$(r.unswept.amount)}` +
    (r.unswept.oldest ? `; oldest ${r.unswept.oldest.orderId} waiting ${r.unswept.oldest.age}` : ""),
  ];
  for (const d of r.unswept.deposits) {
    lines.push(
      `  deposit ${d.orderId}\t${$(d.amount)}\t${d.source}\tminted ${d.mintedAt} (${d.age} ago)` +
        (d.deadSweeps ? `\t${d.deadSweeps} dead sweep(s)` : ""),
    );
  }
  lines.push(`open sweeps (recorded, not yet final): ${r.openSweeps.length}; dead sweeps: ${r.deadSweeps}`);
  for (const s of r.openSweeps) {
    lines.push(
      `  sweep ${s.sweepId}\tfrom ${s.from}\t${$(s.amount)} (leaves ${$(s.leave)})\ttx ${s.txHash}\tage ${s.age}`,
    );
  }
  for (const invalid of r.invalidSweeps ?? []) lines.push(`  INVALID sweep record, counted nowhere: ${invalid}`);
  lines.push(`pending payouts (processing): ${r.pendingPayouts.length}`);
  for (const p of r.pendingPayouts) {
    const funding = p.fundable ? "fundable now" : `NOT fundable now: ${p.why}`;
    lines.push(`  payout ${p.orderId}\t${$(p.amount)}\tto ${p.to}\twaiting ${p.age}\t${funding}`);
  }
  lines.push(`stuck payouts (recorded, not yet counted): ${r.stuckPayouts.length}`);
  for (const p of r.stuckPayouts) {
    const last = p.lastStatus ? `${p.lastStatus.state} at ${p.lastStatus.at}` : "not looked at yet";
    lines.push(`  payout ${p.orderId}\ttx ${p.txHash}\t${$(p.amount)}\tage ${p.age} (since ${p.recordedAt})\t${last}`);
  }
  return lines;
}
