/**
 * Cold addresses (kv/cold_addresses.ts): where each native chain's reserves above the hot wallet's band go. Watch-only
 * (the service never holds their keys). A change is scheduled, never immediate: it takes effect after
 * `COLD_ADDRESS_DELAY_HOURS` (default 24), and the `cold_address_change` alert is raised in the same commit as the
 * change and its audit entry, so whoever holds an operator key cannot redirect reserves before the operators see it;
 * `cold cancel` drops a pending change (audited, alerted too).
 */
import { z } from "zod";
import { destinationAddressError } from "../../chains/addresses.ts";
import { NATIVE_CHAINS, type NativeChain } from "../../chains/catalog.ts";
import { addAlert, readAlert } from "../../kv/alerts.ts";
import { appendAudit } from "../../kv/audit.ts";
import { type ColdAddress, coldAddressAt, coldAddressKey, readColdAddress } from "../../kv/cold_addresses.ts";
import { defineOp, type OpContext, OpError } from "./op.ts";

const chainInput = z.enum(NATIVE_CHAINS, { error: `must be one of ${NATIVE_CHAINS.join(", ")}` });

const Shown = z.object({
  chain: z.enum(NATIVE_CHAINS),
  /** The address reserves go to now, or null when none has taken effect. */
  current: z.string().nullable(),
  currentSince: z.string().nullable(),
  pending: z.object({ address: z.string(), at: z.string(), effectiveAt: z.string(), by: z.string() }).nullable(),
});

function shown(chain: NativeChain, r: ColdAddress): z.infer<typeof Shown> {
  return { chain, current: r.current?.address ?? null, currentSince: r.current?.since ?? null, pending: r.pending };
}

/** Writes `next` (checked against what was read), its audit entry and the alert, in one commit. */
async function commitChange(
  ctx: OpContext,
  chain: NativeChain,
  entry: Deno.KvEntryMaybe<ColdAddress>,
  next: ColdAddress,
  action: string,
  message: string,
): Promise<string> {
  const alert = await readAlert(ctx.kv, "cold_address_change", chain);
  const op = ctx.kv.atomic().check(entry).set(coldAddressKey(chain), next);
  const audit = appendAudit(op, { by: ctx.by, action, subject: chain, before: entry.value, after: next }, ctx.now());
  addAlert(op, alert, { kind: "cold_address_change", subject: chain, chain, message, now: ctx.now() });
  if (!(await op.commit()).ok) {
    throw new OpError(409, `the cold address of ${chain} changed meanwhile; nothing was recorded, look and try again`);
  }
  return audit.id;
}

export const coldShow = defineOp({
  name: "cold show",
  summary: "Each native chain's cold address in effect, and a change waiting for its delay",
  scope: "read",
  http: { method: "get", path: "/cold" },
  input: z.object({}),
  output: z.object({ chains: z.array(Shown), delayHours: z.number() }),
  run: async (ctx) => {
    const now = ctx.now();
    const chains = [];
    for (const chain of NATIVE_CHAINS) {
      chains.push(shown(chain, coldAddressAt((await readColdAddress(ctx.kv, chain)).value, now)));
    }
    return { chains, delayHours: ctx.config.coldAddressDelayMs / 3_600_000 };
  },
  text: (r) =>
    r.chains.map((c) =>
      `${c.chain}\tcold ${c.current ?? "(none)"}${c.currentSince ? ` since ${c.currentSince}` : ""}` +
      (c.pending ? `\tpending ${c.pending.address} from ${c.pending.effectiveAt} (by ${c.pending.by})` : "")
    ),
});

export const coldSet = defineOp({
  name: "cold set",
  summary: "Schedules a chain's cold address: it takes effect after COLD_ADDRESS_DELAY_HOURS, and an alert is raised " +
    "at once (cancel it with `cold cancel` meanwhile)",
  scope: "operate",
  http: { method: "post", path: "/cold/{chain}" },
  input: z.object({
    chain: chainInput,
    address: z.string({ error: "is required: the cold address (watch-only: the service never holds its key)" })
      .describe("The cold address, on the chain's own format; watch-only: the service never holds its key"),
  }),
  positionals: ["chain", "address"],
  output: z.object({ chain: z.enum(NATIVE_CHAINS), address: z.string(), effectiveAt: z.string(), auditId: z.string() }),
  run: async (ctx, { chain, address }) => {
    const invalid = destinationAddressError(chain, address, ctx.settings().utxoNetwork(chain));
    if (invalid) throw new OpError(400, invalid);
    const entry = await readColdAddress(ctx.kv, chain);
    const now = ctx.now();
    const standing = coldAddressAt(entry.value, now);
    if (standing.current?.address === address && standing.pending === null) {
      throw new OpError(409, `${address} is already the cold address of ${chain}`);
    }
    if (standing.pending?.address === address) {
      throw new OpError(409, `${address} is already scheduled for ${chain}, from ${standing.pending.effectiveAt}`);
    }
    const effectiveAt = new Date(now.getTime() + ctx.config.coldAddressDelayMs).toISOString();
    const next: ColdAddress = { ...standing, pending: { address, at: now.toISOString(), effectiveAt, by: ctx.by } };
    const auditId = await commitChange(
      ctx,
      chain,
      entry,
      next,
      "cold.set",
      `${ctx.by} changed the cold address of ${chain} from ${standing.current?.address ?? "none"} to ${address}: ` +
        `it takes effect at ${effectiveAt}. If no operator meant this, cancel it (deno task admin cold cancel ${chain}) ` +
        `and revoke the operator key used`,
    );
    return { chain, address, effectiveAt, auditId };
  },
  text: (r) => [`cold address of ${r.chain}: ${r.address}, from ${r.effectiveAt} (audit ${r.auditId}; alert raised)`],
});

export const coldCancel = defineOp({
  name: "cold cancel",
  summary: "Cancels a chain's cold address change that has not taken effect yet",
  scope: "operate",
  http: { method: "post", path: "/cold/{chain}/cancel" },
  input: z.object({ chain: chainInput }),
  positionals: ["chain"],
  output: z.object({ chain: z.enum(NATIVE_CHAINS), cancelled: z.string(), auditId: z.string() }),
  run: async (ctx, { chain }) => {
    const entry = await readColdAddress(ctx.kv, chain);
    const standing = coldAddressAt(entry.value, ctx.now());
    if (!standing.pending) throw new OpError(404, `no cold address change of ${chain} is waiting`);
    const cancelled = standing.pending.address;
    const auditId = await commitChange(
      ctx,
      chain,
      entry,
      { ...standing, pending: null },
      "cold.cancel",
      `${ctx.by} cancelled the change of the cold address of ${chain} to ${cancelled}; it stays ` +
        `${standing.current?.address ?? "unset"}`,
    );
    return { chain, cancelled, auditId };
  },
  text: (r) => [`cancelled: the cold address of ${r.chain} will not become ${r.cancelled} (audit ${r.auditId})`],
});

export const COLD_OPS = [coldShow, coldSet, coldCancel];
