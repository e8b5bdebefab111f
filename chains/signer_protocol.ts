/**
 * The signer process's protocol (docs/operations.md "Roles", the signer process): one JSON line each way per connection
 * on a unix socket, validated with these schemas on both ends. A request is at most `MAX_SIGNER_LINE_BYTES`; a longer
 * one is refused unread. The worker (chains/signer_client.ts) asks for public keys and signatures; the signer
 * (actors/signer/server.ts) answers a signature only for a transaction whose own bytes do what the purpose's record in
 * KV says.
 */
import { z } from "zod";
import { EVM_CHAINS } from "./catalog.ts";
import { TransientChainError } from "./adapter.ts";
import { MAX_TX_INPUTS } from "./shared/coin_select.ts";

/** The most one request line may hold (an unsigned Sui transaction with many coins stays far below it). */
export const MAX_SIGNER_LINE_BYTES = 64 * 1024;

/** Chains whose keys the signer holds: the mnemonic's (native chains, EVM accounts) and the EVM minter key. */
export const SIGNER_CHAINS = ["sol", "xrp", "sui", "doge", "zec", ...EVM_CHAINS] as const;
export type SignerProtocolChain = typeof SIGNER_CHAINS[number];

/**
 * Which key: the mnemonic's deposit, hot-wallet or change keys by index (chains/derivation.ts), or `minter`, the EVM
 * minter key (EVM_MINTER_KEY_FILE), which has no index (0).
 */
export const SIGNER_BRANCHES = ["deposit", "hot", "change", "minter"] as const;
export type SignerBranch = typeof SIGNER_BRANCHES[number];

const hex = (what: string) => z.string().regex(/^([0-9a-fA-F]{2})*$/, `${what} must be hex bytes`);
const KeyRef = {
  chain: z.enum(SIGNER_CHAINS),
  index: z.number().int().min(0).max(2 ** 31 - 1),
  branch: z.enum(SIGNER_BRANCHES),
};

export const PurposeSchema = z.strictObject({
  kind: z.string().regex(/^[a-z_]{1,32}$/, "purpose kind must be lowercase letters and _"),
  id: z.string().min(1).max(200),
});

export const SignerRequestSchema = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("publicKey"), ...KeyRef }),
  z.strictObject({
    op: z.literal("sign"),
    ...KeyRef,
    /** secp256k1 chains: the 32-byte digest; ed25519 chains: the message (sol) or intent digest (sui). */
    payload: hex("payload").min(2),
    /** The record it is for; null when the worker asked outside any purpose (always refused). */
    purpose: PurposeSchema.nullable(),
    /** The unsigned transaction the payload was computed from (chains/signing.ts `SigningContext.unsigned`). */
    unsigned: z.string().min(1).max(MAX_SIGNER_LINE_BYTES),
  }),
  z.strictObject({
    /**
     * A doge or zec transaction, every input at once: one decision, one outflow count, one transaction read back. The
     * signer recomputes each input's sighash from the unsigned bytes and its own reading of the coins they spend
     * (docs/operations.md "Roles", the signer process), never from amounts a request could give.
     */
    op: z.literal("signUtxo"),
    chain: z.enum(["doge", "zec"]),
    /** Per input, in input order: the key that signs it and the sighash the worker computed (compared, not used). */
    inputs: z.array(z.strictObject({
      index: KeyRef.index,
      branch: z.enum(["deposit", "change"]),
      payload: hex("payload").length(64),
    })).min(1).max(MAX_TX_INPUTS),
    purpose: PurposeSchema.nullable(),
    /** The unsigned transaction (hex, every scriptSig empty: chains/utxo/tx.ts `UtxoTxFamily.build`). */
    unsigned: hex("unsigned").min(2).max(MAX_SIGNER_LINE_BYTES),
  }),
]);
export type SignerRequest = z.infer<typeof SignerRequestSchema>;
export type SignRequest = Extract<SignerRequest, { op: "sign" }>;
export type SignUtxoRequest = Extract<SignerRequest, { op: "signUtxo" }>;

export const SignerResponseSchema = z.discriminatedUnion("ok", [
  z.strictObject({
    ok: z.literal(true),
    /** publicKey: 33 bytes compressed (secp256k1) or 32 bytes (ed25519). */
    publicKey: hex("publicKey").optional(),
    /** sign: DER (doge, zec, xrp), r||s with its recovery bit (EVM), or the 64-byte ed25519 signature. */
    signature: z.strictObject({
      format: z.enum(["der", "recoverable", "ed25519"]),
      bytes: hex("signature"),
      recovery: z.union([z.literal(0), z.literal(1)]).optional(),
    }).optional(),
    /** signUtxo: one DER signature (without the hash type) per input, in input order. */
    signatures: z.array(hex("signature")).optional(),
  }),
  z.strictObject({
    ok: z.literal(false),
    /** `refused`: the request was understood and a check said no (the reason says which); `invalid`: not understood. */
    kind: z.enum(["refused", "invalid", "failed"]),
    error: z.string(),
  }),
]);
export type SignerResponse = z.infer<typeof SignerResponseSchema>;

/** A request or answer as its one line (JSON, then "\n"). */
export function encodeLine(value: SignerRequest | SignerResponse): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value) + "\n");
}

/**
 * Reads one line (without its "\n") from `conn`, at most `max` bytes; throws when the peer sends more before a newline
 * or closes first, so an oversized request is refused before anything of it is parsed.
 */
export async function readLine(conn: Deno.Conn, max: number = MAX_SIGNER_LINE_BYTES): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const buf = new Uint8Array(16 * 1024);
  while (true) {
    const n = await conn.read(buf);
    if (n === null) throw new Error("the peer closed the connection before a full line");
    const chunk = buf.subarray(0, n);
    const newline = chunk.indexOf(0x0a);
    const part = newline >= 0 ? chunk.subarray(0, newline) : chunk;
    size += part.length;
    if (size > max) throw new Error(`the line is longer than ${max} bytes`);
    chunks.push(part.slice());
    if (newline >= 0) break;
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(all);
}

/**
 * A refusal of the signer process, as the worker sees it: transient, so its step fails and waits with backoff like any
 * failed prepare, the reason kept on the order (`lastTransientError`); nothing was signed, recorded or broadcast.
 */
export class SignerRefusedError extends TransientChainError {
  constructor(readonly reason: string, readonly kind: "refused" | "invalid" | "failed") {
    super(`the signer process ${kind === "refused" ? "refused" : "could not answer"}: ${reason}`);
    this.name = "SignerRefusedError";
  }
}
