/**
 * JWT signing keys (kv/jwt_keys.ts): listed, and retired by an operator at the end of a rotation (docs/operations.md,
 * "Rotating the JWT signing key"), from the shell or over the admin API with scope `keys` (as partner keys: both decide
 * whose tokens work). Retiring appends its audit entry in the same commit and ends the key's tokens at once in every
 * process; the key this process signs with is never retired from here.
 */
import { z } from "zod";
import { appendAudit } from "../../kv/audit.ts";
import { type JwtKeyRecord, KID_PATTERN, listJwtKeys, mayHaveLiveTokens, retireJwtKey } from "../../kv/jwt_keys.ts";
import { defineOp, OpError } from "./op.ts";

const KEY_STATES = ["signing", "published", "expired", "retired"] as const;

const ShownJwtKey = z.object({
  kid: z.string(),
  firstSignedAt: z.string(),
  lastSignedAt: z.string(),
  retiredAt: z.string().nullable(),
  retiredBy: z.string().nullable(),
  state: z.enum(KEY_STATES).describe(
    "signing: the key of the process answering; published: in the JWKS, its tokens verify; expired: every token " +
      "it signed has expired (no longer published); retired: an operator retired it, its tokens are refused",
  ),
});

function shown(k: JwtKeyRecord, signingKid: string | null, now: number): z.infer<typeof ShownJwtKey> {
  const { publicJwk: _, ...rest } = k;
  const state = k.retiredAt
    ? "retired" as const
    : k.kid === signingKid
    ? "signing" as const
    : mayHaveLiveTokens(k, now)
    ? "published" as const
    : "expired" as const;
  return { ...rest, state };
}

export const jwtKeyList = defineOp({
  name: "jwt keys",
  summary: "Lists the JWT signing keys recorded by every process on this KV, newest signing first",
  scope: "keys",
  http: { method: "get", path: "/jwt/keys" },
  input: z.object({}),
  output: z.object({ keys: z.array(ShownJwtKey) }),
  run: async (ctx) => {
    const signingKid = await ctx.signingKid();
    const now = ctx.now().getTime();
    const keys = (await listJwtKeys(ctx.kv)).sort((a, b) => b.lastSignedAt.localeCompare(a.lastSignedAt));
    return { keys: keys.map((k) => shown(k, signingKid, now)) };
  },
  text: ({ keys }) =>
    keys.map((k) =>
      `${k.kid}\t${k.state}${k.retiredAt ? ` ${k.retiredAt} by ${k.retiredBy}` : ""}\tfirst=${k.firstSignedAt}\t` +
      `last=${k.lastSignedAt}`
    ),
});

export const jwtKeyRetire = defineOp({
  name: "jwt retire",
  summary: "Retires a JWT signing key at once: its tokens are refused everywhere and the JWKS drops it (for good)",
  scope: "keys",
  http: { method: "post", path: "/jwt/keys/{kid}/retire" },
  input: z.object({
    kid: z.string().regex(KID_PATTERN, "must be a key id: 43 base64url characters, as `jwt keys` lists them")
      .describe("The key's `kid` (its RFC 7638 thumbprint)"),
  }),
  positionals: ["kid"],
  output: z.object({ kid: z.string(), retiredAt: z.string(), auditId: z.string() }),
  run: async (ctx, { kid }) => {
    // Retiring the key new tokens are signed with would refuse every token this process issues from then on.
    if (kid === await ctx.signingKid()) {
      throw new OpError(
        409,
        `${kid} is the key this ${ctx.via === "api" ? "server" : "configuration"} signs with: ` +
          "roll every process to the new key first, then retire the old one",
      );
    }
    let auditId = "";
    const result = await retireJwtKey(ctx.kv, kid, ctx.by, ctx.now(), (op, before, after) => {
      const strip = ({ publicJwk: _, ...k }: JwtKeyRecord) => k;
      const entry = { by: ctx.by, action: "jwt-key.retire", subject: kid, before: strip(before), after: strip(after) };
      auditId = appendAudit(op, entry, ctx.now()).id;
    });
    if (!result.ok) {
      if (result.reason === "unknown") throw new OpError(404, `no JWT signing key ${kid} is recorded`);
      throw new OpError(
        409,
        `${kid} was already retired at ${result.record!.retiredAt} by ${result.record!.retiredBy}`,
      );
    }
    return { kid, retiredAt: result.after.retiredAt!, auditId };
  },
  text: (r) => [`retired JWT key ${r.kid} at ${r.retiredAt}; tokens it signed no longer work and the JWKS drops it`],
});

export const JWT_KEY_OPS = [jwtKeyList, jwtKeyRetire];
