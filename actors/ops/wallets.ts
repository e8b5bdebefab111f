/**
 * Partner wallets (kv/user_wallets.ts, spec 2.7): an operator blocks or unblocks a wallet, or gives it to another
 * partner (scope `keys`, as partner keys: both decide who may act for a wallet). Each change appends its audit entry
 * in the same commit.
 */
import { z } from "zod";
import { isEvmAddress } from "../../chains/addresses.ts";
import { appendAudit } from "../../kv/audit.ts";
import { moveUserWallet, setUserWalletStatus, type UserWallet, type WalletStatus } from "../../kv/user_wallets.ts";
import { partnerId } from "./keys.ts";
import { defineOp, type OpContext, OpError } from "./op.ts";

export const evmAddress = (description: string) =>
  z.string().refine(isEvmAddress, { error: (issue) => `${issue.input} is not an EVM address` }).describe(description);

const WalletSchema = z.object({
  address: z.string(),
  status: z.enum(["active", "inactive"]),
  partnerId: z.string().describe("The owning partner; empty while unbound (blocked before its first token)"),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const StatusResult = z.object({ wallet: WalletSchema, auditId: z.string() });

async function setStatus(ctx: OpContext, address: string, status: WalletStatus, createIfMissing: boolean) {
  let auditId = "";
  const wallet = await setUserWalletStatus(ctx.kv, address, status, {
    createIfMissing,
    audit: (op, before: UserWallet | null, after: UserWallet) => {
      const entry = {
        by: ctx.by,
        action: `wallet.${status === "active" ? "activate" : "deactivate"}`,
        subject: after.address,
        before: before ? { status: before.status } : null,
        after: { status: after.status },
      };
      auditId = appendAudit(op, entry, ctx.now()).id;
    },
  });
  if (!wallet) throw new OpError(404, `no wallet ${address.toLowerCase()}`);
  return { wallet, auditId };
}

export const walletDeactivate = defineOp({
  name: "wallet deactivate",
  summary: "Blocks a wallet: its tokens are refused and new deposits fail (an address without a token is blocked too)",
  scope: "keys",
  http: { method: "post", path: "/wallets/{address}/deactivate" },
  input: z.object({ address: evmAddress("The partner's EVM wallet") }),
  positionals: ["address"],
  output: StatusResult,
  run: (ctx, { address }) => setStatus(ctx, address, "inactive", true),
  text: ({ wallet }) => [`wallet ${wallet.address} is inactive: its tokens are refused and new deposits fail`],
});

export const walletActivate = defineOp({
  name: "wallet activate",
  summary: "Unblocks a wallet",
  scope: "keys",
  http: { method: "post", path: "/wallets/{address}/activate" },
  input: z.object({ address: evmAddress("The partner's EVM wallet") }),
  positionals: ["address"],
  output: StatusResult,
  run: (ctx, { address }) => setStatus(ctx, address, "active", false),
  text: ({ wallet }) => [`wallet ${wallet.address} is active`],
});

export const walletMove = defineOp({
  name: "wallet move",
  summary: "Gives a wallet to another partner: the old partner's tokens for it stop working at once",
  scope: "keys",
  http: { method: "post", path: "/wallets/{address}/move" },
  input: z.object({
    address: evmAddress("The partner's EVM wallet"),
    toPartner: partnerId("The partner that owns the wallet from now on"),
  }),
  positionals: ["address"],
  output: z.object({ wallet: WalletSchema, from: z.string(), to: z.string(), by: z.string(), auditId: z.string() }),
  run: async (ctx, { address, toPartner }) => {
    const res = await moveUserWallet(ctx.kv, address, toPartner, ctx.by, ctx.now());
    if (!res.ok) throw new OpError(res.error.startsWith("no wallet") ? 404 : 409, res.error);
    const from = (res.audit.before as { partnerId: string }).partnerId;
    return { wallet: res.wallet, from, to: toPartner, by: ctx.by, auditId: res.audit.id };
  },
  text: (r) => {
    const from = r.from || "(no partner)";
    return [
      `wallet ${r.wallet.address} moved from ${from} to ${r.to} by ${r.by} (audit ${r.auditId})`,
      `tokens issued to ${from} are refused from now on; ${r.to}'s API keys can issue tokens for it`,
    ];
  },
});

export const WALLET_OPS = [walletDeactivate, walletActivate, walletMove];
