/**
 * The signer process (docs/operations.md "Roles", the signer process): it holds the master mnemonic and the EVM minter
 * key, and answers the worker's requests on a unix socket (chains/signer_protocol.ts). A signature is given only when,
 * in order: (1) what it is asked to sign is the digest or message of the unsigned bytes it is shown, recomputed here
 * with the chain's library (chains/signed_assembly.ts); (2) the purpose names a record in KV that expects a transaction
 * now (purposes.ts); (3) the bytes, signed, decode with the chain's own explainer (the one every prepared transaction
 * is read back with before it is recorded, docs/verify-before-record.md) to exactly what that record says, fee within
 * the payer's bound; (4) value leaving our control fits the chain's hourly limit (outflow.ts), spent in the same
 * decision. The signature is computed before (2), since the explainers read signed bytes, and is released only after
 * (4). Every refusal is logged and raises `signer_refused` (subject: the purpose), and the worker's step fails and
 * waits like any failed prepare: nothing is recorded or broadcast.
 */
import { bytesToHex } from "viem";
import { type ChainSymbol, isEvmChain, isNativeChain, type UtxoChain } from "../../chains/catalog.ts";
import { differences } from "../../chains/effects.ts";
import type { MinterKey } from "../../chains/minter_key.ts";
import { type AnySignature, payloadOf, signedRawOf } from "../../chains/signed_assembly.ts";
import type { EdSignerChain, SecpSignerChain, Signer } from "../../chains/signer.ts";
import {
  encodeLine,
  readLine,
  type SignerRequest,
  SignerRequestSchema,
  type SignerResponse,
  type SignRequest,
  type SignUtxoRequest,
} from "../../chains/signer_protocol.ts";
import { writeAll } from "../../chains/signer_client.ts";
import { MAX_FEE_DROPS } from "../../chains/xrp/payer.ts";
import { SUI_GAS_BUDGET } from "../../chains/sui/payer.ts";
import { raiseAlert } from "../../kv/alerts.ts";
import type { KeyBranch } from "../../chains/derivation.ts";
import { type OutflowLimits, spendOutflow } from "./outflow.ts";
import { expectedFor, Refusal, type SignerFacts } from "./purposes.ts";
import { signUtxo, type UtxoFacts } from "./utxo.ts";

export interface SignerServiceOptions {
  kv: Deno.Kv;
  signer: Signer;
  /** The EVM minter key (`minter` branch); null when this signer holds none (no live EVM chain). */
  minter: MinterKey | null;
  facts: SignerFacts;
  limits: OutflowLimits;
  now: () => Date;
  log: (msg: string) => void;
  /** The live UTXO chains of this signer (their network and transaction steps); absent: none. */
  utxo?: (chain: UtxoChain) => UtxoFacts | undefined;
}

/** The most an account chain's payout may burn in fee: the payer's own bound (chains/<chain>/payer.ts). */
const MAX_FEE: Partial<Record<ChainSymbol, bigint>> = { xrp: MAX_FEE_DROPS, sui: SUI_GAS_BUDGET };

/** Owner and group read/write, nobody else (see `serveSigner`). */
export const SOCKET_MODE = 0o660;

/** How long a connection may take to send its request line: a stalled peer does not hold a connection open. */
const READ_TIMEOUT_MS = 10_000;

/** The answer to one request line. Never throws: a failure is an answer. */
export async function answer(opts: SignerServiceOptions, line: string): Promise<SignerResponse> {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return { ok: false, kind: "invalid", error: "the request is not JSON" };
  }
  const parsed = SignerRequestSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(request)"}: ${i.message}`).join("; ");
    return { ok: false, kind: "invalid", error: `the request does not follow the protocol: ${issues}` };
  }
  const req = parsed.data;
  try {
    if (req.op === "publicKey") return { ok: true, publicKey: bytesToHex(publicKeyOf(opts, req)).slice(2) };
    if (req.op === "signUtxo") return await signUtxo(opts, req);
    return await sign(opts, req);
  } catch (err) {
    if (req.op !== "publicKey" && err instanceof Refusal) return await refuse(opts, req, err.message);
    const reason = err instanceof Error ? err.message : String(err);
    opts.log(`signer: ${req.op} ${req.chain} ${keysOf(req)} failed: ${reason}`);
    // A sign request that failed on its way is refused all the same: nothing was released.
    if (req.op !== "publicKey") return await refuse(opts, req, reason);
    return { ok: false, kind: "failed", error: reason };
  }
}

function publicKeyOf(opts: SignerServiceOptions, req: Pick<SignRequest, "chain" | "index" | "branch">): Uint8Array {
  if (req.branch === "minter") {
    if (!isEvmChain(req.chain) || !opts.minter) throw new Error(`this signer holds no minter key for ${req.chain}`);
    return opts.minter.publicKey();
  }
  return opts.signer.publicKey(req.chain, req.index, req.branch as KeyBranch);
}

async function sign(opts: SignerServiceOptions, req: SignRequest): Promise<SignerResponse> {
  // (1) Only the bytes shown are signed.
  let payload: Uint8Array;
  try {
    payload = payloadOf(req.chain, req.unsigned);
  } catch (err) {
    throw new Refusal(`the unsigned transaction does not decode: ${(err as Error).message}`);
  }
  if (bytesToHex(payload).slice(2) !== req.payload.toLowerCase()) {
    throw new Refusal(`what ${req.chain} is asked to sign is not the digest of the unsigned transaction shown with it`);
  }
  if (req.purpose === null) throw new Refusal("the request names no purpose: the signer signs only for a recorded one");
  const explainer = opts.facts.explainer(req.chain);
  if (!explainer) throw new Refusal(`${req.chain} is not a live chain of this signer`);
  // Signed here and read back with the chain's explainer; released only once (2) to (4) say yes.
  const signature = signPayload(opts, req, payload);
  const publicKey = publicKeyOf(opts, req);
  const raw = signedRawOf(req.chain, req.unsigned, signature, publicKey);
  let effects;
  try {
    effects = await explainer.explain(raw);
  } catch (err) {
    throw new Refusal(`the transaction cannot be read back: ${(err as Error).message}`);
  }
  // (2) The purpose's record says what the bytes must do; (3) they do exactly that.
  const expected = await expectedFor(opts.kv, opts.facts, req, effects, opts.now());
  const found = differences(expected.intent, effects, { txHash: "", raw });
  const maxFee = MAX_FEE[req.chain];
  if (maxFee !== undefined && (effects.maxFee ?? 0n) > maxFee) {
    found.push(`offers ${effects.maxFee} in fee, above the payer's bound of ${maxFee}`);
  }
  if (found.length > 0) {
    throw new Refusal(`the transaction does not do what ${label(req)} records: ${found.join("; ")}`);
  }
  // (4) The hourly limit, spent in the decision.
  if (expected.outflow) {
    const { chain, amount } = expected.outflow;
    const spent = await spendOutflow(opts.kv, opts.limits, chain, amount, opts.now().getTime());
    if (!spent.ok) throw new Refusal(spent.reason);
  }
  const out = signature.format === "recoverable"
    ? { format: signature.format, bytes: hex(signature.bytes), recovery: signature.recovery }
    : { format: signature.format, bytes: hex(signature.bytes) };
  return { ok: true, signature: out };
}

function signPayload(opts: SignerServiceOptions, req: SignRequest, payload: Uint8Array): AnySignature {
  if (req.branch === "minter") {
    if (!opts.minter || !isEvmChain(req.chain)) throw new Refusal(`this signer holds no minter key for ${req.chain}`);
    return opts.minter.signDigest(payload);
  }
  const branch = req.branch as KeyBranch;
  if (req.chain === "sol" || req.chain === "sui") {
    return {
      format: "ed25519",
      bytes: opts.signer.signMessage(req.chain as EdSignerChain, req.index, payload, branch),
    };
  }
  return opts.signer.signDigest(req.chain as SecpSignerChain, req.index, payload, branch);
}

/** The keys a request names, as a refusal says them. */
function keysOf(req: SignerRequest): string {
  if (req.op !== "signUtxo") return `${req.branch} key ${req.index}`;
  return [...new Set(req.inputs.map((i) => `${i.branch} key ${i.index}`))].join(", ");
}

async function refuse(
  opts: SignerServiceOptions,
  req: SignRequest | SignUtxoRequest,
  reason: string,
): Promise<SignerResponse> {
  const subject = req.purpose ? `${req.purpose.kind}:${req.purpose.id}` : "no purpose";
  const message = `refused to sign on ${req.chain} (${keysOf(req)}) for ${subject}: ${reason}`;
  opts.log(`signer: ${message}`);
  try {
    await raiseAlert(opts.kv, {
      kind: "signer_refused",
      subject,
      chain: isNativeChain(req.chain) || isEvmChain(req.chain) ? req.chain : null,
      message,
      now: opts.now(),
    });
  } catch (err) {
    opts.log(`signer: could not raise signer_refused for ${subject}: ${(err as Error).message}`);
  }
  return { ok: false, kind: "refused", error: reason };
}

function label(req: SignRequest): string {
  return req.purpose ? `${req.purpose.kind} ${req.purpose.id}` : "the purpose";
}

function hex(bytes: Uint8Array): string {
  return bytesToHex(bytes).slice(2);
}

/**
 * Serves `opts` on the unix socket at `path`, mode 0660: the signer's user and the socket's group may connect (a unix
 * socket needs write permission to connect). Not 0600: that would make the worker run as the signer's own user, who
 * can read the signer's key files and its memory, which is what the separate process is there to prevent; the
 * worker's user is in the group instead (docs/operations.md "Roles", the signer process). A stale socket file left by a
 * killed signer is replaced; any other file at `path` is refused. One request per connection.
 */
export async function serveSigner(
  opts: SignerServiceOptions & { path: string },
): Promise<{ close(): Promise<void> }> {
  await removeStaleSocket(opts.path);
  const listener = Deno.listen({ transport: "unix", path: opts.path });
  await Deno.chmod(opts.path, SOCKET_MODE);
  const open = new Set<Promise<void>>();
  const loop = (async () => {
    for await (const conn of listener) {
      const p: Promise<void> = handle(opts, conn).finally(() => open.delete(p));
      open.add(p);
    }
  })().catch(() => {/* the listener closed */});
  return {
    async close() {
      listener.close();
      await loop;
      await Promise.allSettled([...open]);
      await Deno.remove(opts.path).catch(() => {});
    },
  };
}

/** Removes a socket file no signer listens on any more; refuses a live one (another signer) and any other file. */
async function removeStaleSocket(path: string): Promise<void> {
  let stat: Deno.FileInfo;
  try {
    stat = await Deno.lstat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  if (!stat.isSocket) throw new Error(`SIGNER_SOCKET ${path} exists and is not a socket: refusing to replace it`);
  const live = await Deno.connect({ transport: "unix", path }).then((c) => (c.close(), true), () => false);
  if (live) throw new Error(`another signer is listening on SIGNER_SOCKET ${path}: refusing to take it over`);
  await Deno.remove(path);
}

async function handle(opts: SignerServiceOptions, conn: Deno.Conn): Promise<void> {
  const timer = setTimeout(() => conn.close(), READ_TIMEOUT_MS);
  try {
    let line: string;
    try {
      line = await readLine(conn);
    } catch (err) {
      await writeAll(conn, encodeLine({ ok: false, kind: "invalid", error: (err as Error).message })).catch(() => {});
      return;
    } finally {
      clearTimeout(timer);
    }
    await writeAll(conn, encodeLine(await answer(opts, line)));
  } catch (err) {
    opts.log(`signer: a connection failed: ${(err as Error).message}`);
  } finally {
    try {
      conn.close();
    } catch { /* closed already */ }
  }
}
