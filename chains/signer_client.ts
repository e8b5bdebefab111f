/**
 * The worker's side of the signer process (docs/operations.md "Roles", the signer process): the signing port the
 * adapters take (chains/adapter.ts `AccountAdapterOptions.signer`, chains/evm `EvmDigestSigner`) served over the
 * signer's unix socket, so a worker started with `SIGNER_SOCKET` holds no key. Each signature request carries the
 * unsigned transaction the adapter built and the purpose of the pipeline step asking (chains/signing.ts); the signer
 * answers only when the bytes do what the purpose's record says, and a refusal is a `SignerRefusedError` (transient:
 * the step waits and retries, nothing is recorded or broadcast).
 *
 * Public keys are not secret: the ones the adapters need synchronously (hot wallets, UTXO change keys, the transfer
 * address, the minter) are loaded once at start (`preload`); a key not loaded is refused by name rather than guessed.
 * One connection per request: a unix socket connects in microseconds, and a request never waits behind another's
 * checks.
 */
import { bytesToHex, hexToBytes, keccak256, type LocalAccount, serializeTransaction } from "viem";
import { toAccount } from "viem/accounts";
import { type EvmChain, isEvmChain, type NativeChain } from "./catalog.ts";
import { evmAddressFromPublicKey, publicKeyToAddress } from "./derivation.ts";
import type { SecpSignature } from "./signer.ts";
import { currentSigningPurpose, type SigningContext } from "./signing.ts";
import type { UtxoInputToSign } from "./utxo/tx.ts";
import {
  encodeLine,
  readLine,
  type SignerBranch,
  type SignerProtocolChain,
  SignerRefusedError,
  type SignerRequest,
  type SignerResponse,
  SignerResponseSchema,
} from "./signer_protocol.ts";

export interface KeyRef {
  chain: SignerProtocolChain;
  index: number;
  branch: SignerBranch;
}

/** How long one request may take before the worker gives up on it (a hung signer fails the step, not the worker). */
const REQUEST_TIMEOUT_MS = 30_000;

/** Keys `loadKey` keeps beyond the preloaded ones (33 bytes each: a bound on memory, not on sweeps). */
const MAX_LOADED_KEYS = 10_000;

const keyId = (k: KeyRef) => `${k.chain}/${k.branch}/${k.index}`;

export class RemoteSigner {
  readonly #path: string;
  readonly #keys = new Map<string, Uint8Array>();
  /** Keys loaded after start (`loadKey`), oldest first. */
  readonly #loaded: string[] = [];

  private constructor(path: string) {
    this.#path = path;
  }

  /** Connects to the signer at `path` and loads the public keys of `preload`; throws naming the socket if it cannot. */
  static async connect(path: string, preload: readonly KeyRef[]): Promise<RemoteSigner> {
    const signer = new RemoteSigner(path);
    for (const key of preload) {
      const answer = await signer.#ask({ op: "publicKey", ...key });
      if (!answer.publicKey) throw new Error(`the signer at ${path} gave no public key for ${keyId(key)}`);
      signer.#keys.set(keyId(key), hexToBytes(`0x${answer.publicKey}`));
    }
    return signer;
  }

  /**
   * Loads one more public key (a deposit key before its sweep is built). At most `MAX_LOADED_KEYS` are kept beyond
   * the preloaded ones: the oldest loaded is dropped first, and is asked for again if needed.
   */
  async loadKey(chain: SignerProtocolChain, index: number, branch: SignerBranch): Promise<void> {
    const id = keyId({ chain, index, branch });
    if (this.#keys.has(id)) return;
    const answer = await this.#ask({ op: "publicKey", chain, index, branch });
    if (!answer.publicKey) throw new SignerRefusedError(`the signer gave no public key for ${id}`, "failed");
    if (this.#loaded.length >= MAX_LOADED_KEYS) this.#keys.delete(this.#loaded.shift()!);
    this.#loaded.push(id);
    this.#keys.set(id, hexToBytes(`0x${answer.publicKey}`));
  }

  publicKey(chain: SignerProtocolChain, index: number, branch: SignerBranch = "deposit"): Uint8Array {
    const key = this.#keys.get(keyId({ chain, index, branch }));
    if (!key) {
      throw new SignerRefusedError(
        `the ${chain} ${branch} key ${index} was not loaded from the signer (loadKey): a keyless worker knows only ` +
          "the public keys it asked the signer for",
        "invalid",
      );
    }
    return key.slice();
  }

  address(chain: SignerProtocolChain, index: number, branch: SignerBranch = "deposit"): string {
    const key = this.publicKey(chain, index, branch);
    return isEvmChain(chain) ? evmAddressFromPublicKey(key) : publicKeyToAddress(chain as NativeChain, key);
  }

  async signDigest(
    chain: SignerProtocolChain,
    index: number,
    digest: Uint8Array,
    branch: SignerBranch = "deposit",
    context?: SigningContext,
  ): Promise<SecpSignature> {
    const sig = (await this.#sign(chain, index, branch, digest, context)).signature;
    if (!sig || sig.format === "ed25519") throw new SignerRefusedError(`no secp256k1 signature for ${chain}`, "failed");
    const bytes = hexToBytes(`0x${sig.bytes}`);
    if (sig.format === "der") return { format: "der", bytes };
    if (sig.recovery === undefined) {
      throw new SignerRefusedError("an EVM signature came without its recovery", "failed");
    }
    return { format: "recoverable", bytes, recovery: sig.recovery };
  }

  async signMessage(
    chain: "sol" | "sui",
    index: number,
    message: Uint8Array,
    branch: SignerBranch = "deposit",
    context?: SigningContext,
  ): Promise<Uint8Array> {
    const sig = (await this.#sign(chain, index, branch, message, context)).signature;
    if (sig?.format !== "ed25519") throw new SignerRefusedError(`no ed25519 signature for ${chain}`, "failed");
    return hexToBytes(`0x${sig.bytes}`);
  }

  /**
   * A viem account for the EVM minter key the signer holds (`minter` branch): it signs transactions only, each sent
   * as its unsigned serialization with the current purpose. Its address must have been preloaded.
   */
  minterAccount(chain: EvmChain): LocalAccount {
    return this.evmAccount(chain, 0, "minter");
  }

  /** A viem account signing through the signer with the EVM key (`index`, `branch`); it signs nothing but transactions. */
  evmAccount(chain: EvmChain, index: number, branch: SignerBranch): LocalAccount {
    const address = this.address(chain, index, branch) as `0x${string}`;
    const refuse = () => Promise.reject(new Error(`the account ${address} signs transactions only`));
    return toAccount({
      address,
      signMessage: refuse,
      signTypedData: refuse,
      signTransaction: async (tx, options) => {
        const serializer = options?.serializer ?? serializeTransaction;
        const unsigned = await serializer(tx);
        const sig = await this.signDigest(chain, index, hexToBytes(keccak256(unsigned)), branch, { unsigned });
        if (sig.format !== "recoverable") throw new Error(`${chain}: the signer gave a DER signature for EVM`);
        return await serializer(tx, {
          r: bytesToHex(sig.bytes.slice(0, 32)),
          s: bytesToHex(sig.bytes.slice(32, 64)),
          yParity: sig.recovery,
        });
      },
    });
  }

  /**
   * The UTXO payer's port (chains/utxo/tx.ts `UtxoSigningPort`): one request for every input of `unsigned`, with the
   * key of each and the sighash computed here, which the signer recomputes from its own reading of the coins before
   * it signs. Answers one DER signature per input.
   */
  async signUtxoInputs(
    chain: "doge" | "zec",
    unsigned: string,
    inputs: readonly UtxoInputToSign[],
  ): Promise<Uint8Array[]> {
    const answer = await this.#ask({
      op: "signUtxo",
      chain,
      inputs: inputs.map((i) => ({ index: i.index, branch: i.branch, payload: bytesToHex(i.digest).slice(2) })),
      purpose: currentSigningPurpose(),
      unsigned,
    });
    const signatures = answer.signatures;
    if (!signatures || signatures.length !== inputs.length) {
      throw new SignerRefusedError(`the signer gave no signature for each of the ${inputs.length} inputs`, "failed");
    }
    return signatures.map((s) => hexToBytes(`0x${s}`));
  }

  #sign(
    chain: SignerProtocolChain,
    index: number,
    branch: SignerBranch,
    payload: Uint8Array,
    context: SigningContext | undefined,
  ): Promise<SignerResponse & { ok: true }> {
    if (!context) {
      return Promise.reject(
        new SignerRefusedError(`${chain}: this adapter gives the signer no unsigned transaction to check`, "invalid"),
      );
    }
    return this.#ask({
      op: "sign",
      chain,
      index,
      branch,
      payload: bytesToHex(payload).slice(2),
      purpose: currentSigningPurpose(),
      unsigned: context.unsigned,
    });
  }

  async #ask(request: SignerRequest): Promise<SignerResponse & { ok: true }> {
    let conn: Deno.UnixConn;
    try {
      conn = await Deno.connect({ transport: "unix", path: this.#path });
    } catch (err) {
      throw new SignerRefusedError(`cannot reach the signer at ${this.#path}: ${(err as Error).message}`, "failed");
    }
    const timer = setTimeout(() => conn.close(), REQUEST_TIMEOUT_MS);
    let line: string;
    try {
      await writeAll(conn, encodeLine(request));
      line = await readLine(conn);
    } catch (err) {
      throw new SignerRefusedError(`the signer at ${this.#path} did not answer: ${(err as Error).message}`, "failed");
    } finally {
      clearTimeout(timer);
      try {
        conn.close();
      } catch { /* closed by the timer */ }
    }
    let parsed;
    try {
      parsed = SignerResponseSchema.safeParse(JSON.parse(line));
    } catch {
      throw new SignerRefusedError("the signer's answer is not JSON", "failed");
    }
    if (!parsed.success) throw new SignerRefusedError("the signer's answer does not follow the protocol", "failed");
    const answer = parsed.data;
    if (!answer.ok) throw new SignerRefusedError(answer.error, answer.kind);
    return answer;
  }

  toJSON(): string {
    return "[RemoteSigner]";
  }
}

export async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}
