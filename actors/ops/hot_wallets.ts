/**
 * Hot wallets of the account chains (docs/operations.md "Rotating a hot wallet"): which derivation index is in effect,
 * the wallets retired and their drains, and the rotation itself; and the UTXO chains' change addresses, rotated the
 * same way with nothing to drain. A rotation writes the new index, its audit entry and the
 * `hot_wallet_rotation` alert in one commit (actors/hot_wallet_rotation.ts); the old wallet is then drained into the new
 * one by the service, write-ahead, once nothing recorded against it is open.
 */
import { z } from "zod";
import { ACCOUNT_CHAINS, UTXO_CHAINS } from "../../chains/catalog.ts";
import { readHotWalletHolds } from "../../kv/hot_wallet.ts";
import { readChangeAddressState, readHotWalletState } from "../../kv/hot_wallets.ts";
import { rotateChangeAddress, rotateHotWallet, RotationRefused } from "../hot_wallet_rotation.ts";
import { defineOp, OpError } from "./op.ts";

const chainInput = z.enum(ACCOUNT_CHAINS, {
  error: `must be one of ${ACCOUNT_CHAINS.join(", ")} (UTXO chains have no hot wallet to rotate)`,
});

const Wallet = z.object({ index: z.number(), address: z.string().nullable() });

const Retired = z.object({
  index: z.number(),
  address: z.string(),
  into: z.object({ index: z.number(), address: z.string() }),
  retiredAt: z.string(),
  by: z.string(),
  status: z.enum(["draining", "drained"]),
  /** Payouts recorded from it and not yet final or dead: the drain waits for them. */
  openPayouts: z.number(),
  drainTxHash: z.string().nullable().describe("The open drain while draining; the final one once drained"),
  deadDrains: z.number(),
  delivered: z.string().nullable(),
});

const Shown = z.object({
  chain: z.enum(ACCOUNT_CHAINS),
  current: Wallet,
  since: z.string().nullable(),
  retired: z.array(Retired),
});

export const hotShow = defineOp({
  name: "hot show",
  summary: "Each account chain's hot wallet in effect (its derivation index), and the wallets it retired with their " +
    "drains",
  scope: "read",
  http: { method: "get", path: "/hot-wallets" },
  input: z.object({}),
  output: z.object({ chains: z.array(Shown) }),
  run: async (ctx) => {
    const chains = await ctx.chains();
    const out = [];
    for (const chain of ACCOUNT_CHAINS) {
      const { state } = await readHotWalletState(ctx.kv, chain);
      const index = state?.current.index ?? 0;
      const address = state?.current.address ?? chains.payer(chain).hotWallet;
      const retired = [];
      for (const r of state?.retired ?? []) {
        retired.push({
          index: r.index,
          address: r.address,
          into: r.into,
          retiredAt: r.retiredAt,
          by: r.by,
          status: r.status,
          openPayouts: (await readHotWalletHolds(ctx.kv, chain, r.index)).count,
          drainTxHash: r.attempt?.txHash ?? r.drainTxHash ?? null,
          deadDrains: r.deadAttempts.length,
          delivered: r.delivered ?? null,
        });
      }
      out.push({ chain, current: { index, address }, since: state?.current.since ?? null, retired });
    }
    return { chains: out };
  },
  text: (r) =>
    r.chains.flatMap((c) => [
      `${c.chain}\thot ${c.current.address ?? "(disabled)"} (index ${c.current.index})` +
      (c.since ? ` since ${c.since}` : ""),
      ...c.retired.map((w) =>
        `  retired ${w.address} (index ${w.index}) at ${w.retiredAt} by ${w.by}: ${w.status}` +
        (w.status === "draining" ? `, ${w.openPayouts} open payout(s)` : "") +
        (w.drainTxHash ? `, drain ${w.drainTxHash}` : "") + (w.delivered ? `, delivered ${w.delivered}` : "")
      ),
    ]),
});

export const hotRotate = defineOp({
  name: "hot rotate",
  summary: "Rotates an account chain's hot wallet to the next derivation index: new payouts and sweeps use the new " +
    "wallet at once, and the old one is drained into it once its recorded payouts are done (alert raised)",
  scope: "operate",
  http: { method: "post", path: "/hot-wallets/{chain}/rotate" },
  input: z.object({ chain: chainInput }),
  positionals: ["chain"],
  output: z.object({
    chain: z.enum(ACCOUNT_CHAINS),
    from: Wallet.extend({ address: z.string() }),
    to: Wallet.extend({ address: z.string() }),
    auditId: z.string(),
  }),
  run: async (ctx, { chain }) => {
    const chains = await ctx.chains();
    try {
      // Refused (nothing written) when the chain's payer cannot sign for another index, or a drain is open.
      return await rotateHotWallet({ kv: ctx.kv, chains, log: (m) => console.log(m) }, chain, ctx.by, ctx.now());
    } catch (err) {
      if (err instanceof RotationRefused) throw new OpError(err.status, err.message);
      throw err;
    }
  },
  text: (r) => [
    `${r.chain} hot wallet rotated: ${r.from.address} (index ${r.from.index}) -> ${r.to.address} (index ${r.to.index})` +
    ` (audit ${r.auditId}; alert raised; the old wallet is drained into the new one by the service)`,
  ],
});

const utxoInput = z.enum(UTXO_CHAINS, {
  error: `must be one of ${UTXO_CHAINS.join(", ")} (account chains rotate their hot wallet: hot rotate)`,
});

const ShownChange = z.object({
  chain: z.enum(UTXO_CHAINS),
  current: Wallet,
  since: z.string().nullable(),
  retired: z.array(z.object({ index: z.number(), address: z.string(), retiredAt: z.string(), by: z.string() })),
});

export const changeShow = defineOp({
  name: "change show",
  summary: "Each UTXO chain's change address in effect (its derivation index on the change branch), and the ones it " +
    "retired (their coins stay spendable treasury coins)",
  scope: "read",
  http: { method: "get", path: "/change-addresses" },
  input: z.object({}),
  output: z.object({ chains: z.array(ShownChange) }),
  run: async (ctx) => {
    const chains = await ctx.chains();
    const out = [];
    for (const chain of UTXO_CHAINS) {
      const { state } = await readChangeAddressState(ctx.kv, chain);
      const address = state?.current.address ?? chains.payer(chain).changeAddress;
      out.push({
        chain,
        current: { index: state?.current.index ?? 0, address },
        since: state?.current.since ?? null,
        retired: state?.retired ?? [],
      });
    }
    return { chains: out };
  },
  text: (r) =>
    r.chains.flatMap((c) => [
      `${c.chain}\tchange ${c.current.address ?? "(disabled)"} (index ${c.current.index})` +
      (c.since ? ` since ${c.since}` : ""),
      ...c.retired.map((w) => `  retired ${w.address} (index ${w.index}) at ${w.retiredAt} by ${w.by}`),
    ]),
});

export const changeRotate = defineOp({
  name: "change rotate",
  summary: "Rotates a UTXO chain's change address to the next derivation index: new change goes there at once; coins " +
    "at the old one stay spendable treasury coins (alert raised)",
  scope: "operate",
  http: { method: "post", path: "/change-addresses/{chain}/rotate" },
  input: z.object({ chain: utxoInput }),
  positionals: ["chain"],
  output: z.object({
    chain: z.enum(UTXO_CHAINS),
    from: Wallet.extend({ address: z.string() }),
    to: Wallet.extend({ address: z.string() }),
    auditId: z.string(),
  }),
  run: async (ctx, { chain }) => {
    const chains = await ctx.chains();
    try {
      return await rotateChangeAddress({ kv: ctx.kv, chains, log: (m) => console.log(m) }, chain, ctx.by, ctx.now());
    } catch (err) {
      if (err instanceof RotationRefused) throw new OpError(err.status, err.message);
      throw err;
    }
  },
  text: (r) => [
    `${r.chain} change address rotated: ${r.from.address} (index ${r.from.index}) -> ${r.to.address} ` +
    `(index ${r.to.index}) (audit ${r.auditId}; alert raised)`,
  ],
});

export const HOT_WALLET_OPS = [hotShow, hotRotate, changeShow, changeRotate];
