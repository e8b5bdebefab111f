/**
 * Operator keys (kv/operator_keys.ts): created, listed and revoked from the shell only (`http: null`), so no key,
 * however scoped, can mint another over the network.
 */
import { z } from "zod";
import {
  createOperatorKey,
  listOperatorKeys,
  OPERATOR_NAME_PATTERN,
  OPERATOR_SCOPES,
  revokeOperatorKey,
} from "../../kv/operator_keys.ts";
import { defineOp, OpError } from "./op.ts";

const ShownKey = z.object({
  keyId: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(OPERATOR_SCOPES)),
  createdAt: z.string(),
  createdBy: z.string(),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});

export const operatorKeyCreate = defineOp({
  name: "operator-key create",
  summary: "Creates an operator key; its secret is shown once",
  scope: "keys",
  http: null,
  input: z.object({
    name: z.string().regex(OPERATOR_NAME_PATTERN, "Must be 1-64 letters, digits, '.', '_', '@' or '-'"),
    scopes: z.string().transform((s, ctx) => {
      const scopes = s.split(",").map((x) => x.trim()).filter(Boolean);
      const bad = scopes.filter((x) => !(OPERATOR_SCOPES as readonly string[]).includes(x));
      if (scopes.length === 0 || bad.length > 0) {
        ctx.addIssue({ code: "custom", message: `Must be a comma-separated list of ${OPERATOR_SCOPES.join(", ")}` });
        return z.NEVER;
      }
      return scopes as (typeof OPERATOR_SCOPES[number])[];
    }),
    expiresInDays: z.string().regex(/^[1-9]\d{0,4}$/, "Must be a positive whole number").optional(),
  }),
  output: z.object({ key: ShownKey, operatorKey: z.string() }),
  run: async (ctx, input) => {
    const { operatorKey, record } = await createOperatorKey(ctx.kv, {
      name: input.name,
      scopes: input.scopes,
      by: ctx.by,
      expiresInDays: input.expiresInDays === undefined ? undefined : Number(input.expiresInDays),
      now: ctx.now(),
    });
    const { secretHash: _, ...key } = record;
    return { key, operatorKey };
  },
  text: ({ key, operatorKey }) => [
    `created operator key ${key.keyId} for ${key.name} with scopes ${key.scopes.join(",")}` +
    (key.expiresAt ? `, expires ${key.expiresAt}` : ", no expiry"),
    "the secret is shown once and cannot be recovered:",
    operatorKey,
  ],
});

export const operatorKeyList = defineOp({
  name: "operator-key list",
  summary: "Lists operator keys (never their secrets)",
  scope: "keys",
  http: null,
  input: z.object({}),
  output: z.object({ keys: z.array(ShownKey) }),
  run: async (ctx) => ({
    keys: (await listOperatorKeys(ctx.kv)).map(({ secretHash: _, ...k }) => k),
  }),
  text: ({ keys }) => [
    ...keys.map((k) =>
      `${k.keyId}\tname=${k.name}\tscopes=${k.scopes.join(",")}\tcreated=${k.createdAt} by ${k.createdBy}\t${
        k.revokedAt ? `revoked ${k.revokedAt}` : k.expiresAt ? `expires ${k.expiresAt}` : "active"
      }`
    ),
    `${keys.length} operator key(s)`,
  ],
});

export const operatorKeyRevoke = defineOp({
  name: "operator-key revoke",
  summary: "Revokes an operator key at once",
  scope: "keys",
  http: null,
  input: z.object({ keyId: z.string().min(1).max(64) }),
  positionals: ["keyId"],
  output: z.object({ keyId: z.string(), revokedAt: z.string() }),
  run: async (ctx, { keyId }) => {
    const revoked = await revokeOperatorKey(ctx.kv, keyId, ctx.by, ctx.now());
    if (!revoked?.revokedAt) throw new OpError(404, `no operator key ${keyId}`);
    return { keyId, revokedAt: revoked.revokedAt };
  },
  text: (r) => [`revoked operator key ${r.keyId} at ${r.revokedAt}`],
});

export const OPERATOR_KEY_OPS = [operatorKeyCreate, operatorKeyList, operatorKeyRevoke];
