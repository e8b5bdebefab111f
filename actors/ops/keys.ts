/**
 * Partner API keys (kv/api_keys.ts): created, revoked and listed by an operator, from the shell or over the admin API
 * with scope `keys`. The secret is shown once, in the answer that creates the key, and never again (only its hash is
 * stored). Creating and revoking append their audit entry in the same commit.
 */
import { z } from "zod";
import { appendAudit } from "../../kv/audit.ts";
import { type ApiKeyRecord, createApiKey, listApiKeys, PARTNER_ID_PATTERN, revokeApiKey } from "../../kv/api_keys.ts";
import { defineOp, OpError } from "./op.ts";

/** The refusal of a partner id that is not one, shell and API alike. */
export const PARTNER_ID_MESSAGE = "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";
export const partnerId = (description: string) =>
  z.string().regex(PARTNER_ID_PATTERN, PARTNER_ID_MESSAGE).describe(description);

const KEY_STATES = ["active", "expired", "revoked"] as const;

const ShownApiKey = z.object({
  keyId: z.string(),
  partnerId: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});

const shown = ({ secretHash: _, ...key }: ApiKeyRecord) => key;

export const apiKeyCreate = defineOp({
  name: "api-key create",
  summary: "Creates a partner API key; its secret is in this answer only and cannot be recovered",
  scope: "keys",
  http: { method: "post", path: "/api-keys" },
  input: z.object({
    partner: partnerId("The partner the key belongs to"),
    expiresInDays: z.string().regex(/^[1-9]\d{0,4}$/, "must be a positive whole number").optional()
      .describe("Days until the key stops working; none: no expiry"),
  }),
  output: z.object({ key: ShownApiKey, apiKey: z.string(), auditId: z.string() }),
  run: async (ctx, input) => {
    let auditId = "";
    const { apiKey, record } = await createApiKey(ctx.kv, input.partner, {
      expiresInDays: input.expiresInDays === undefined ? undefined : Number(input.expiresInDays),
      now: ctx.now(),
      audit: (op, record) => {
        const entry = {
          by: ctx.by,
          action: "api-key.create",
          subject: record.keyId,
          before: null,
          after: shown(record),
        };
        auditId = appendAudit(op, entry, ctx.now()).id;
      },
    });
    return { key: shown(record), apiKey, auditId };
  },
  text: ({ key, apiKey }) => [
    `created API key ${key.keyId} for partner ${key.partnerId}` +
    (key.expiresAt ? `, expires ${key.expiresAt}` : ", no expiry"),
    "the secret is shown once and cannot be recovered:",
    apiKey,
  ],
});

export const apiKeyRevoke = defineOp({
  name: "api-key revoke",
  summary: "Revokes a partner API key at once: tokens it issued stop working (a revoked key stays revoked)",
  scope: "keys",
  http: { method: "post", path: "/api-keys/{keyId}/revoke" },
  input: z.object({ keyId: z.string().min(1).max(64).describe("The key's id, `ak_` and 16 hex digits") }),
  positionals: ["keyId"],
  output: z.object({ keyId: z.string(), revokedAt: z.string(), auditId: z.string().nullable() }),
  run: async (ctx, { keyId }) => {
    let auditId: string | null = null;
    const revoked = await revokeApiKey(ctx.kv, keyId, ctx.now(), (op, before, after) => {
      const entry = {
        by: ctx.by,
        action: "api-key.revoke",
        subject: keyId,
        before: shown(before),
        after: shown(after),
      };
      auditId = appendAudit(op, entry, ctx.now()).id;
    });
    if (!revoked?.revokedAt) throw new OpError(404, `no API key ${keyId}`);
    return { keyId, revokedAt: revoked.revokedAt, auditId };
  },
  text: (r) => [`revoked ${r.keyId} at ${r.revokedAt}; tokens it issued no longer work`],
});

export const apiKeyList = defineOp({
  name: "api-key list",
  summary: "Lists partner API keys and their state (never their secrets)",
  scope: "keys",
  http: { method: "get", path: "/api-keys" },
  input: z.object({}),
  output: z.object({ keys: z.array(ShownApiKey.extend({ state: z.enum(KEY_STATES) })) }),
  run: async (ctx) => {
    const now = ctx.now().getTime();
    return {
      keys: (await listApiKeys(ctx.kv)).map((k) => ({
        ...shown(k),
        state: k.revokedAt
          ? "revoked" as const
          : k.expiresAt && Date.parse(k.expiresAt) <= now
          ? "expired" as const
          : "active" as const,
      })),
    };
  },
  text: ({ keys }) =>
    keys.map((k) => {
      const state = k.state === "revoked"
        ? `revoked ${k.revokedAt}`
        : k.state === "expired"
        ? `expired ${k.expiresAt}`
        : `active${k.expiresAt ? ` until ${k.expiresAt}` : ""}`;
      return `${k.keyId}\tpartner=${k.partnerId}\tcreated=${k.createdAt}\t${state}`;
    }),
});

export const KEY_OPS = [apiKeyCreate, apiKeyRevoke, apiKeyList];
