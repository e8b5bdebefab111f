/**
 * A rippled-shaped server: a local Deno.serve endpoint answering rippled's JSON-RPC (`{method, params: [{...}]}` ->
 * `{result: {status, ...}}`) in the shapes rippled documents (xrpl.org "ledger", "tx", "account_info", "fee",
 * "server_state", "server_info", "submit"), over an in-memory chain of ledgers. No rippled runs on this machine kind
 * (docs/architecture.md): the xrp tests talk to this and say so in their names.
 *
 * - Ledgers close on demand (`closeLedgers`); the validated ledger lags the last closed one by `validatedLag`, so a
 *   closed ledger is not validated at once, as on the network. Each ledger is answered in API v1 (transaction fields
 *   inline, `metaData`, string `ledger_index`) or v2 (`tx_json`, `meta`, `hash`), chosen per ledger (`apiVersion`).
 * - Account roots with Balance, Sequence and OwnerCount; the base reserve, owner reserve and base fee of `server_state`.
 * - `submit` decodes the blob with xrpl, verifies its signature and that the key is the account's, checks Sequence
 *   (`tefPAST_SEQ`, `terPRE_SEQ`), Fee (`telINSUF_FEE_P`), LastLedgerSequence (`tefMAX_LEDGER`), and the reserve rules
 *   (`tecNO_DST_INSUF_XRP` for a payment below the base reserve to an unfunded account, `tecUNFUNDED_PAYMENT` when the
 *   sender would go below its reserve: both claim the fee and use the Sequence), and applies it in the next ledger.
 * - `tx` with `min_ledger`/`max_ledger` answers `txnNotFound` with `searched_all: true` (this server keeps every
 *   ledger) once the range is below the current ledger.
 * - `server_info` answers `info.network_id` when `networkId` is given (the question CHAIN_MODE asks a node).
 * - Test hooks: `fund`, `closeLedgers`, `drop` (a submitted transaction is accepted and lost: it expires), `tamper`
 *   (answers of one method out of their documented shape),
 *   `useSequence` (another transaction of the account takes its next Sequence), and the traps a scan must survive:
 *   `partialPayment`, `unrecordedPartialPayment` (an old ledger's `delivered_amount: "unavailable"`), `failedPayment`
 *   (tec), `iouPayment`, `accountDelete`, `paymentChannelClaim`.
 *
 * Mainnet-sized ledgers (`mainnetLedgers`): every ledger's `transactions` also lists about 75 transactions of other
 * people's (tests/support/xrpl_mainnet_ledgers.ts: the mainnet mix and where it comes from), generated from the ledger
 * index when asked and never stored, so a test can serve a day of ledgers (~24,700) with flat memory on both sides.
 * The ledger's own transactions (deposits injected with the hooks above) sit among them; `tx` answers a generated
 * transaction from its hash alone.
 *
 * Limits, as rippled and providers set them:
 * - rippled rate-limits each client by a usage balance that every request charges and that decays exponentially over
 *   time (xrpl.org "Rate Limiting", XRPLF/xrpl-dev-portal content/references/rippled-api/api-conventions/
 *   rate-limiting.md; the charges are rippled's Resource::Fees, src/ripple/resource/Fees.h). Over the limit, rippled's
 *   JSON-RPC answers HTTP 503 with the text body "Server is overloaded", and its WebSocket and Clio (the API server
 *   public providers run; its HTTP session refuses with `rpcSLOW_DOWN` when its DOSGuard says no) answer the error
 *   `slowDown`, "You are placing too much load on the server." (rippled's ErrorCodes table). `rateLimit` models that
 *   balance (`limit` requests, decaying with time constant `windowMs`) and answers either way (`answer`). rippled also
 *   answers `tooBusy` ("The server is too busy to help you now.") when its job queue is full: the same path.
 * - Providers cap an answer's size (`maxResponseBytes`: HTTP 413 "response too large") and some are slow
 *   (`bytesPerSecond`: the answer is sent no faster than that).
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { decode, deriveAddress, hashes, verifySignature } from "xrpl";
import {
  entriesJson,
  entryJson,
  generatedCount,
  generatedHash,
  generatedPlace,
  type MainnetLedgerShape,
} from "./xrpl_mainnet_ledgers.ts";
import { jsonAt, responseTooLarge } from "./provider_limits.ts";

/** The XRPL genesis account: the server's source of funds for test payments (no key: injected, not signed). */
export const GENESIS = "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh";

interface AccountRoot {
  balance: bigint;
  sequence: number;
  ownerCount: number;
}

type Accounts = Map<string, AccountRoot>;

interface StoredTx {
  hash: string;
  tx: Record<string, unknown>;
  meta: Record<string, unknown>;
}

interface Ledger {
  index: number;
  hash: string;
  parentHash: string;
  txs: StoredTx[];
  accounts: Accounts;
  apiVersion: 1 | 2;
  closeTime: number;
}

export interface RippledServerOptions {
  /** Closed ledgers not yet validated (default 1). */
  validatedLag?: number;
  /** API shape of ledgers closed from the start (default 2); change with `apiVersion`. */
  apiVersion?: 1 | 2;
  reserveBase?: bigint;
  reserveInc?: bigint;
  baseFee?: bigint;
  /** Ledgers closed at start (default 5). */
  initialLedgers?: number;
  /**
   * `server_info` `info.network_id` (config/chain_mode.ts `NODE_IDENTITY`): 1 (testnet) by default, as devnet
   * requires; null leaves it out, as a mainnet rippled does.
   */
  networkId?: number | null;
  /** Every ledger also lists mainnet-sized traffic of other people's, generated when asked (module comment). */
  mainnetLedgers?: MainnetLedgerShape;
  /** A provider's cap on an answer's size in bytes: a longer answer is refused with HTTP 413. */
  maxResponseBytes?: number;
  /** Answers sent no faster than this (a slow provider). */
  bytesPerSecond?: number;
  /**
   * rippled's per-client usage limit (module comment): each request adds 1 to a balance that decays exponentially
   * with time constant `windowMs`; a request finding it at `limit` or above is refused, as rippled over JSON-RPC
   * (`answer: "503"`, the default) or as Clio and rippled's WebSocket (`answer: "slowDown"`) refuse it.
   */
  rateLimit?: { limit: number; windowMs: number; answer?: "503" | "slowDown" };
}

export interface RippledServer {
  url: string;
  /** Test hooks (see the module comment). */
  hooks: RippledHooks;
  /** Requests answered, bytes of answers sent, requests refused by a limit. */
  readonly served: { requests: number; bytes: number; refused: number };
  close(): Promise<void>;
}

export interface RippledHooks {
  readonly reserveBase: bigint;
  readonly baseFee: bigint;
  readonly validatedIndex: number;
  readonly closedIndex: number;
  /** The API version of ledgers closed from now on. */
  apiVersion(v: 1 | 2): void;
  closeLedgers(n?: number): void;
  /** Closes ledgers until `index` is validated. */
  validateThrough(index: number): void;
  /** A payment from the genesis account, applied in the next ledger; its hash. */
  fund(address: string, drops: bigint): string;
  /** A submitted transaction with this hash is answered tesSUCCESS and lost: it never reaches a ledger. */
  drop(txHash: string): void;
  /** The node keeps ledgers from `index` only (online deletion): below it `ledger` and ranged `tx` cannot search. */
  keepHistoryFrom(index: number): void;
  /** The next `n` submissions that would be applied are answered tesSUCCESS and lost (a node that drops them). */
  loseNextSubmissions(n: number): void;
  /** Another transaction of `address` (an AccountSet, injected) takes its next Sequence in the next ledger. */
  useSequence(address: string): string;
  /** A tfPartialPayment whose Amount is `amount` but delivers only `delivered`. */
  partialPayment(to: string, amount: bigint, delivered: bigint): string;
  /**
   * A partial payment as rippled answers one from a ledger before 4594095 (closed before 446000000, January 2014):
   * its metadata has no `DeliveredAmount`, and rippled 2.4's `insertDeliveredAmount`
   * (src/xrpld/rpc/detail/DeliveredAmount.cpp) then answers `delivered_amount: "unavailable"` (from that ledger on,
   * a missing DeliveredAmount means `Amount` was delivered). It delivers `delivered`.
   */
  unrecordedPartialPayment(to: string, amount: bigint, delivered: bigint): string;
  /** A Payment that fails with a `tec` code in a validated ledger: delivers nothing. */
  failedPayment(to: string, amount: bigint, code?: string): string;
  /** An issued-currency payment (USD from the genesis) to `to`. */
  iouPayment(to: string, value: string): string;
  /** An AccountDelete of a made-up account `from` delivering its `drops` to `to`. */
  accountDelete(from: string, to: string, drops: bigint): string;
  /**
   * A PaymentChannelClaim by `from`, the source of a channel to `to` (an existing account), raising the channel's
   * Balance by `drops`: `to` receives them, `from` pays only the fee (the channel's Amount left its balance when the
   * channel was created). The first claim of a pair is preceded, in the same ledger, by the PaymentChannelCreate of a
   * made-up funded `from`.
   */
  paymentChannelClaim(from: string, to: string, drops: bigint): string;
  /** The account as the last closed ledger has it, or null. */
  account(address: string): { balance: bigint; sequence: number; ownerCount: number } | null;
  /**
   * Until called again with null, every successful answer to `method` is a copy passed through `edit` first (a node
   * answering out of its documented shape: a field missing, a float where drops go).
   */
  tamper(method: string, edit: ((result: Record<string, unknown>) => void) | null): void;
  /** Every `submit` answer so far, newest last. */
  readonly submissions: { hash: string; engineResult: string }[];
  /** Calls per method since start. */
  readonly calls: Map<string, number>;
  /** The ledger index a transaction is in (closed ledgers), or null. */
  ledgerOf(txHash: string): number | null;
  /** Every transaction in a closed ledger, oldest first, as submitted (decoded) with its metadata. */
  transactions(): { ledgerIndex: number; hash: string; tx: Record<string, unknown>; meta: Record<string, unknown> }[];
}

class RpcError extends Error {
  constructor(readonly code: string, message: string, readonly extra: Record<string, unknown> = {}) {
    super(message);
  }
}

const ENGINE_MESSAGES: Record<string, string> = {
  tesSUCCESS: "The transaction was applied. Only final in a validated ledger.",
  tefPAST_SEQ: "This sequence number has already passed.",
  tefMAX_LEDGER: "Ledger sequence too high.",
  terPRE_SEQ: "Missing/inapplicable prior transaction.",
  telINSUF_FEE_P: "Fee insufficient.",
  tecNO_DST_INSUF_XRP: "Destination does not exist. Too little XRP sent to create it.",
  tecUNFUNDED_PAYMENT: "Insufficient XRP balance to send.",
  terNO_ACCOUNT: "The source account does not exist.",
  tefBAD_AUTH: "Transaction's public key is not authorized.",
  terINSUF_FEE_B: "Account balance can't pay fee.",
};

const hex = (bytes: Uint8Array) => bytesToHex(bytes).toUpperCase();
/** A ledger's close time as `close_time_iso` gives it (the XRPL epoch is 2000-01-01). */
const closeTimeIso = (l: { closeTime: number }) => new Date((l.closeTime + 946_684_800) * 1000).toISOString();
/** Stands for a run of generated transactions (`<ledger>:<from>:<to>`) in an answer until it is written out. */
const MARKER = "@@xrpl-mainnet:";
/** rippled's words for a client over its usage limit (module comment). */
const SLOW_DOWN = "You are placing too much load on the server.";
const cloneAccounts = (a: Accounts): Accounts => new Map([...a].map(([k, v]) => [k, { ...v }]));

export function startRippledServer(opts: RippledServerOptions = {}): RippledServer {
  const lag = opts.validatedLag ?? 1;
  const reserveBase = opts.reserveBase ?? 1_000_000n;
  const reserveInc = opts.reserveInc ?? 200_000n;
  const baseFee = opts.baseFee ?? 10n;
  let version: 1 | 2 = opts.apiVersion ?? 2;
  const calls = new Map<string, number>();
  const submissions: { hash: string; engineResult: string }[] = [];
  const dropped = new Set<string>();
  let loseNext = 0;
  let firstKept = 0;
  let injected = 0;
  const tampered = new Map<string, (result: Record<string, unknown>) => void>();

  const ledgers: Ledger[] = [];
  /** Payment channels by `source>destination`: their ledger entry id, Amount and claimed Balance (drops). */
  const channels = new Map<string, { id: string; amount: bigint; balance: bigint }>();
  const open: Accounts = new Map([[GENESIS, { balance: 99_000_000_000_000_000n, sequence: 1, ownerCount: 0 }]]);
  let pending: StoredTx[] = [];

  const closed = () => ledgers[ledgers.length - 1];
  const closedIndex = () => closed().index;
  const validatedIndex = () => Math.max(ledgers[0].index, closedIndex() - lag);
  const openIndex = () => closedIndex() + 1;

  function closeLedger(): void {
    const parent = ledgers.at(-1);
    const index = (parent?.index ?? 0) + 1;
    const parentHash = parent?.hash ?? "0".repeat(64);
    const txs = pending;
    pending = [];
    txs.forEach((t, i) => (t.meta.TransactionIndex = i));
    const hash = hex(sha256(new TextEncoder().encode(`${index}:${parentHash}:${txs.map((t) => t.hash).join(",")}`)));
    ledgers.push({
      index,
      hash,
      parentHash,
      txs,
      accounts: cloneAccounts(open),
      apiVersion: version,
      closeTime: 800_000_000 + index * 4,
    });
  }
  for (let i = 0; i < (opts.initialLedgers ?? 5); i++) closeLedger();

  function ledgerByIndex(n: number): Ledger | undefined {
    if (n < firstKept) return undefined;
    const first = ledgers[0].index;
    return ledgers[n - first];
  }

  /** The AffectedNodes entry of an AccountRoot whose balance (and maybe Sequence) changed from `before` to `after`. */
  function accountNode(address: string, before: AccountRoot | undefined, after: AccountRoot): Record<string, unknown> {
    const final = {
      Account: address,
      Balance: after.balance.toString(),
      Flags: 0,
      OwnerCount: after.ownerCount,
      Sequence: after.sequence,
    };
    if (!before) {
      return {
        CreatedNode: {
          LedgerEntryType: "AccountRoot",
          LedgerIndex: hex(sha256(new TextEncoder().encode(address))),
          NewFields: { Account: address, Balance: final.Balance, Sequence: after.sequence },
        },
      };
    }
    const previous: Record<string, unknown> = { Balance: before.balance.toString() };
    if (before.sequence !== after.sequence) previous.Sequence = before.sequence;
    return {
      ModifiedNode: {
        LedgerEntryType: "AccountRoot",
        LedgerIndex: hex(sha256(new TextEncoder().encode(address))),
        FinalFields: final,
        PreviousFields: previous,
      },
    };
  }

  /**
   * Applies balance changes to the open state, the sender paying `fee` and using its Sequence; returns the meta.
   * `credit`: drops moved to `to` (absent for a failed transaction). `deleted`: the sender's root is removed.
   */
  function applyToOpen(
    from: string,
    fee: bigint,
    result: string,
    moves: { to: string; drops: bigint }[],
    extra: Record<string, unknown> = {},
    deleted = false,
  ): Record<string, unknown> {
    const nodes: Record<string, unknown>[] = [];
    const sender = open.get(from)!;
    const before = { ...sender };
    sender.balance -= fee;
    sender.sequence += 1;
    for (const m of moves) {
      sender.balance -= m.drops;
      const prior = open.get(m.to);
      const after = prior
        ? { ...prior, balance: prior.balance + m.drops }
        : { balance: m.drops, sequence: openIndex(), ownerCount: 0 };
      nodes.push(accountNode(m.to, prior ? { ...prior } : undefined, after));
      open.set(m.to, after);
    }
    if (deleted) {
      open.delete(from);
      nodes.unshift({
        DeletedNode: {
          LedgerEntryType: "AccountRoot",
          FinalFields: { Account: from, Balance: "0", Sequence: sender.sequence },
          PreviousFields: { Balance: before.balance.toString() },
        },
      });
    } else {
      nodes.unshift(accountNode(from, before, sender));
    }
    return { AffectedNodes: nodes, TransactionIndex: 0, TransactionResult: result, ...extra };
  }

  function injectedHash(tx: Record<string, unknown>): string {
    return hex(sha256(new TextEncoder().encode(`injected:${++injected}:${JSON.stringify(tx)}`)));
  }

  function inject(tx: Record<string, unknown>, meta: Record<string, unknown>): string {
    const hash = injectedHash(tx);
    pending.push({ hash, tx: { ...tx, hash }, meta });
    return hash;
  }

  /**
   * A partial payment from genesis claiming `amount` and delivering `delivered`, with the `delivered_amount` the
   * metadata shows: the drops, or "unavailable" as rippled answers for a ledger from before DeliveredAmount was
   * recorded (src/xrpld/rpc/detail/DeliveredAmount.cpp, rippled 2.4).
   */
  function partial(to: string, amount: bigint, delivered: bigint, shown: string): string {
    const tx = genesisTx({
      TransactionType: "Payment",
      Destination: to,
      Amount: amount.toString(),
      Flags: 0x20000,
      SendMax: amount.toString(),
    });
    return inject(
      tx,
      applyToOpen(GENESIS, baseFee, "tesSUCCESS", [{ to, drops: delivered }], { delivered_amount: shown }),
    );
  }

  function genesisTx(fields: Record<string, unknown>): Record<string, unknown> {
    const g = open.get(GENESIS)!;
    return { Account: GENESIS, Fee: baseFee.toString(), Sequence: g.sequence, SigningPubKey: "", ...fields };
  }

  const hooks: RippledHooks = {
    reserveBase,
    baseFee,
    get validatedIndex() {
      return validatedIndex();
    },
    get closedIndex() {
      return closedIndex();
    },
    submissions,
    calls,
    tamper(method, edit) {
      if (edit) tampered.set(method, edit);
      else tampered.delete(method);
    },
    apiVersion(v) {
      version = v;
    },
    closeLedgers(n = 1) {
      for (let i = 0; i < n; i++) closeLedger();
    },
    validateThrough(index) {
      while (validatedIndex() < index) closeLedger();
    },
    fund(address, drops) {
      const tx = genesisTx({ TransactionType: "Payment", Destination: address, Amount: drops.toString() });
      return inject(
        tx,
        applyToOpen(GENESIS, baseFee, "tesSUCCESS", [{ to: address, drops }], { delivered_amount: drops.toString() }),
      );
    },
    drop(txHash) {
      dropped.add(txHash.toUpperCase());
    },
    keepHistoryFrom(index) {
      firstKept = index;
    },
    loseNextSubmissions(n) {
      loseNext = n;
    },
    useSequence(address) {
      const root = open.get(address);
      if (!root) throw new Error(`useSequence: ${address} does not exist`);
      const tx = {
        TransactionType: "AccountSet",
        Account: address,
        Fee: baseFee.toString(),
        Sequence: root.sequence,
        SigningPubKey: "",
      };
      return inject(tx, applyToOpen(address, baseFee, "tesSUCCESS", []));
    },
    partialPayment: (to, amount, delivered) => partial(to, amount, delivered, delivered.toString()),
    unrecordedPartialPayment: (to, amount, delivered) => partial(to, amount, delivered, "unavailable"),
    failedPayment(to, amount, code = "tecNO_DST_INSUF_XRP") {
      const tx = genesisTx({ TransactionType: "Payment", Destination: to, Amount: amount.toString() });
      return inject(tx, applyToOpen(GENESIS, baseFee, code, []));
    },
    iouPayment(to, value) {
      const amount = { currency: "USD", issuer: GENESIS, value };
      const tx = genesisTx({ TransactionType: "Payment", Destination: to, Amount: amount });
      // A trust line changes, not an AccountRoot balance of `to`: only the sender's root (its fee) is affected.
      const meta = applyToOpen(GENESIS, baseFee, "tesSUCCESS", [], { delivered_amount: amount });
      (meta.AffectedNodes as unknown[]).push({
        ModifiedNode: {
          LedgerEntryType: "RippleState",
          FinalFields: { Balance: { currency: "USD", issuer: "rrrrrrrrrrrrrrrrrrrrBZbvji", value: `-${value}` } },
          PreviousFields: { Balance: { currency: "USD", issuer: "rrrrrrrrrrrrrrrrrrrrBZbvji", value: "0" } },
        },
      });
      return inject(tx, meta);
    },
    accountDelete(from, to, drops) {
      open.set(from, { balance: drops + baseFee * 500n, sequence: 1, ownerCount: 0 });
      const root = open.get(from)!;
      const tx = {
        TransactionType: "AccountDelete",
        Account: from,
        Destination: to,
        Fee: (baseFee * 500n).toString(),
        Sequence: root.sequence,
        SigningPubKey: "",
      };
      return inject(
        tx,
        applyToOpen(from, baseFee * 500n, "tesSUCCESS", [{ to, drops }], { delivered_amount: drops.toString() }, true),
      );
    },
    // As rippled 2.4's PayChan.cpp applies them (src/xrpld/app/tx/detail/PayChan.cpp): PayChanCreate debits the
    // source by Amount and needs an existing destination (tecNO_DST); PayChanClaim by the source moves the Balance
    // delta from the channel to the destination's AccountRoot and charges the source only the fee.
    paymentChannelClaim(from, to, drops) {
      const dest = open.get(to);
      if (!dest) throw new Error(`paymentChannelClaim: ${to} does not exist (rippled answers tecNO_DST)`);
      let channel = channels.get(`${from}>${to}`);
      if (!channel) {
        const amount = 1_000n * 1_000_000n;
        if (!open.has(from)) {
          open.set(from, { balance: amount + 10n * reserveBase, sequence: openIndex(), ownerCount: 0 });
        }
        const root = open.get(from)!;
        const before = { ...root };
        root.balance -= amount + baseFee;
        root.sequence += 1;
        root.ownerCount += 1;
        channel = {
          id: hex(sha256(new TextEncoder().encode(`channel:${from}:${to}:${before.sequence}`))),
          amount,
          balance: 0n,
        };
        channels.set(`${from}>${to}`, channel);
        const fields = { Account: from, Destination: to, Amount: amount.toString(), SettleDelay: 86400 };
        inject({
          TransactionType: "PaymentChannelCreate",
          ...fields,
          Fee: baseFee.toString(),
          Sequence: before.sequence,
          SigningPubKey: "",
        }, {
          AffectedNodes: [
            accountNode(from, before, root),
            { CreatedNode: { LedgerEntryType: "PayChannel", LedgerIndex: channel.id, NewFields: fields } },
          ],
          TransactionIndex: 0,
          TransactionResult: "tesSUCCESS",
        });
      }
      if (drops <= 0n || channel.balance + drops > channel.amount) {
        throw new Error(
          "paymentChannelClaim: the Balance must rise and stay within the channel's Amount (temBAD_AMOUNT)",
        );
      }
      const root = open.get(from)!;
      const before = { ...root };
      root.balance -= baseFee;
      root.sequence += 1;
      const prior = { ...open.get(to)! };
      const after = { ...prior, balance: prior.balance + drops };
      open.set(to, after);
      const previous = channel.balance;
      channel.balance += drops;
      const tx = {
        TransactionType: "PaymentChannelClaim",
        Account: from,
        Channel: channel.id,
        Balance: channel.balance.toString(),
        Fee: baseFee.toString(),
        Sequence: before.sequence,
        SigningPubKey: "",
      };
      return inject(tx, {
        AffectedNodes: [
          accountNode(from, before, root),
          {
            ModifiedNode: {
              LedgerEntryType: "PayChannel",
              LedgerIndex: channel.id,
              FinalFields: {
                Account: from,
                Destination: to,
                Amount: channel.amount.toString(),
                Balance: channel.balance.toString(),
              },
              PreviousFields: { Balance: previous.toString() },
            },
          },
          accountNode(to, prior, after),
        ],
        TransactionIndex: 0,
        TransactionResult: "tesSUCCESS",
      });
    },
    account(address) {
      const a = closed().accounts.get(address);
      return a ? { ...a } : null;
    },
    ledgerOf(txHash) {
      const h = txHash.toUpperCase();
      return ledgers.find((l) => l.txs.some((t) => t.hash === h))?.index ?? null;
    },
    transactions() {
      return ledgers.flatMap((l) => l.txs.map((t) => ({ ledgerIndex: l.index, hash: t.hash, tx: t.tx, meta: t.meta })));
    },
  };

  // ------------------------------------------------------------------ methods

  function resolveLedger(spec: unknown): { ledger: Ledger | null; index: number } {
    if (spec === undefined || spec === "validated") {
      return { ledger: ledgerByIndex(validatedIndex())!, index: validatedIndex() };
    }
    if (spec === "closed") return { ledger: closed(), index: closedIndex() };
    if (spec === "current") return { ledger: null, index: openIndex() };
    const n = typeof spec === "string" && /^\d+$/.test(spec) ? Number(spec) : spec;
    if (typeof n !== "number" || !Number.isInteger(n)) {
      throw new RpcError("invalidParams", "Invalid field 'ledger_index'.");
    }
    if (n === openIndex()) return { ledger: null, index: n };
    const l = ledgerByIndex(n);
    if (!l) throw new RpcError("lgrNotFound", "ledgerNotFound");
    return { ledger: l, index: n };
  }

  function txShape(l: Ledger, t: StoredTx, inLedger: boolean): Record<string, unknown> {
    const validated = l.index <= validatedIndex();
    if (l.apiVersion === 1) {
      return inLedger
        ? { ...t.tx, hash: t.hash, metaData: t.meta }
        : { ...t.tx, hash: t.hash, meta: t.meta, ledger_index: l.index, validated, inLedger: l.index };
    }
    const { hash: _h, Amount, ...rest } = t.tx;
    const tx_json = t.tx.TransactionType === "Payment"
      ? { ...rest, DeliverMax: Amount }
      : { ...rest, ...(Amount !== undefined ? { Amount } : {}) };
    const common = {
      hash: t.hash,
      meta: t.meta,
      tx_json,
      ledger_index: l.index,
      close_time_iso: closeTimeIso(l),
    };
    return inLedger ? common : { ...common, ledger_hash: l.hash, validated };
  }

  const methods: Record<string, (p: Record<string, unknown>) => Record<string, unknown>> = {
    ledger(p) {
      const { ledger, index } = resolveLedger(p.ledger_index);
      if (!ledger) throw new RpcError("lgrNotFound", "ledgerNotFound (the open ledger is not served here)");
      const validated = index <= validatedIndex();
      const body: Record<string, unknown> = {
        ledger_hash: ledger.hash,
        parent_hash: ledger.parentHash,
        ledger_index: ledger.apiVersion === 1 ? String(index) : index,
        closed: true,
        close_time: ledger.closeTime,
        total_coins: "99999999999999999",
      };
      if (p.transactions === true) {
        body.transactions = p.expand === true
          ? ledger.txs.map((t) => txShape(ledger, t, true))
          : ledger.txs.map((t) => t.hash);
        if (opts.mainnetLedgers) {
          // The ledger's own transactions among the generated ones: half before, half after. Expanded entries are
          // markers here, written out as text when the answer is (`answerText`).
          const count = generatedCount(index, opts.mainnetLedgers);
          const half = Math.floor(count / 2);
          const own = body.transactions as unknown[];
          body.transactions = p.expand === true
            ? [`${MARKER}${index}:0:${half}`, ...own, `${MARKER}${index}:${half}:${count}`]
            : [
              ...Array.from({ length: half }, (_, t) => generatedHash(index, t)),
              ...own,
              ...Array.from({ length: count - half }, (_, t) => generatedHash(index, half + t)),
            ];
        }
      }
      return { ledger: body, ledger_hash: ledger.hash, ledger_index: index, validated };
    },
    tx(p) {
      const hash = String(p.transaction ?? "").toUpperCase();
      const ranged = p.min_ledger !== undefined || p.max_ledger !== undefined;
      let min = 0;
      let max = Infinity;
      if (ranged) {
        min = Number(p.min_ledger);
        max = Number(p.max_ledger);
        if (!Number.isInteger(min) || !Number.isInteger(max) || min > max) {
          throw new RpcError("invalidLgrRange", "Ledger range is invalid.");
        }
        if (max - min > 1000) throw new RpcError("excessiveLgrRange", "Ledger range exceeds 1000.");
      }
      const place = opts.mainnetLedgers ? generatedPlace(hash) : null;
      const home = place ? ledgerByIndex(place.ledger) : undefined;
      if (
        place && home && place.t < generatedCount(home.index, opts.mainnetLedgers) && home.index >= min &&
        home.index <= max
      ) {
        const entry = JSON.parse(entryJson(home.index, place.t, home.apiVersion, closeTimeIso(home)));
        const validated = home.index <= validatedIndex();
        if (home.apiVersion === 2) return { ...entry, ledger_hash: home.hash, validated };
        const { metaData, ...fields } = entry;
        return { ...fields, meta: metaData, ledger_index: home.index, validated, inLedger: home.index };
      }
      for (const l of ledgers) {
        const t = l.txs.find((x) => x.hash === hash);
        if (t && l.index >= min && l.index <= max) return txShape(l, t, false);
      }
      const inOpen = pending.find((x) => x.hash === hash);
      if (inOpen && !ranged) {
        return version === 1
          ? { ...inOpen.tx, hash, validated: false }
          : { tx_json: inOpen.tx, hash, validated: false };
      }
      const extra: Record<string, unknown> = {};
      // This server keeps every ledger: a range wholly closed was searched in full.
      if (ranged) extra.searched_all = max <= closedIndex() && min >= Math.max(firstKept, ledgers[0].index);
      throw new RpcError("txnNotFound", "Transaction not found.", extra);
    },
    account_info(p) {
      const address = String(p.account ?? "");
      const { ledger, index } = resolveLedger(p.ledger_index ?? "current");
      const root = (ledger ? ledger.accounts : open).get(address);
      if (!root) throw new RpcError("actNotFound", "Account not found.", { account: address });
      const data = {
        Account: address,
        Balance: root.balance.toString(),
        Flags: 0,
        LedgerEntryType: "AccountRoot",
        OwnerCount: root.ownerCount,
        Sequence: root.sequence,
      };
      return ledger
        ? { account_data: data, ledger_index: index, validated: index <= validatedIndex() }
        : { account_data: data, ledger_current_index: index, validated: false };
    },
    fee() {
      return {
        current_ledger_size: String(pending.length),
        current_queue_size: "0",
        drops: {
          base_fee: baseFee.toString(),
          median_fee: "5000",
          minimum_fee: baseFee.toString(),
          open_ledger_fee: baseFee.toString(),
        },
        ledger_current_index: openIndex(),
        levels: { median_level: "128000", minimum_level: "256", open_ledger_level: "256", reference_level: "256" },
        max_queue_size: "2000",
      };
    },
    server_info() {
      const networkId = opts.networkId === undefined ? 1 : opts.networkId;
      const v = ledgerByIndex(validatedIndex())!;
      return {
        info: {
          build_version: "2.4.0",
          server_state: "full",
          complete_ledgers: `${Math.max(firstKept, ledgers[0].index)}-${closedIndex()}`,
          ...(networkId === null ? {} : { network_id: networkId }),
          // The reserves and fee in XRP (server_info's unit) are left out: the adapters read drops from server_state.
          validated_ledger: { hash: v.hash, seq: v.index, age: 0 },
        },
      };
    },
    server_state() {
      const v = ledgerByIndex(validatedIndex())!;
      return {
        state: {
          server_state: "full",
          complete_ledgers: `${Math.max(firstKept, ledgers[0].index)}-${closedIndex()}`,
          validated_ledger: {
            base_fee: Number(baseFee),
            close_time: v.closeTime,
            hash: v.hash,
            reserve_base: Number(reserveBase),
            reserve_inc: Number(reserveInc),
            seq: v.index,
          },
        },
      };
    },
    submit(p) {
      const blob = String(p.tx_blob ?? "");
      let tx: Record<string, unknown>;
      try {
        tx = decode(blob) as Record<string, unknown>;
      } catch (err) {
        throw new RpcError("invalidTransaction", `fails local checks: ${(err as Error).message}`);
      }
      if (!verifySignature(blob)) throw new RpcError("invalidTransaction", "fails local checks: Invalid signature.");
      const hash = hashes.hashSignedTx(blob);
      const engine = (code: string) => {
        submissions.push({ hash, engineResult: code });
        return {
          engine_result: code,
          engine_result_code: 0,
          engine_result_message: ENGINE_MESSAGES[code] ?? code,
          tx_blob: blob,
          tx_json: { ...tx, hash },
          accepted: code === "tesSUCCESS" || code.startsWith("tec"),
          applied: code === "tesSUCCESS" || code.startsWith("tec"),
          broadcast: code === "tesSUCCESS" || code.startsWith("tec"),
          kept: true,
          queued: false,
        };
      };
      const account = String(tx.Account);
      if (deriveAddress(String(tx.SigningPubKey)) !== account) return engine("tefBAD_AUTH");
      const root = open.get(account);
      if (!root) return engine("terNO_ACCOUNT");
      if (typeof tx.LastLedgerSequence !== "number") {
        throw new RpcError("invalidTransaction", "this server wants LastLedgerSequence on every transaction");
      }
      if (tx.LastLedgerSequence < openIndex()) return engine("tefMAX_LEDGER");
      const seq = Number(tx.Sequence);
      if (seq < root.sequence) return engine("tefPAST_SEQ");
      if (seq > root.sequence) return engine("terPRE_SEQ");
      const fee = BigInt(String(tx.Fee));
      if (fee < baseFee) return engine("telINSUF_FEE_P");
      const ownReserve = reserveBase + BigInt(root.ownerCount) * reserveInc;
      if (root.balance - fee < 0n) return engine("terINSUF_FEE_B");
      if (loseNext > 0) {
        loseNext--;
        dropped.add(hash);
      }
      if (dropped.has(hash)) return engine("tesSUCCESS"); // accepted by this node, then lost: never in a ledger
      if (tx.TransactionType !== "Payment" || typeof tx.Amount !== "string") {
        throw new RpcError("invalidTransaction", "this server applies XRP Payments only");
      }
      const amount = BigInt(tx.Amount);
      const destination = String(tx.Destination);
      let result = "tesSUCCESS";
      if (!open.has(destination) && amount < reserveBase) result = "tecNO_DST_INSUF_XRP";
      else if (root.balance - fee - amount < ownReserve) result = "tecUNFUNDED_PAYMENT";
      const meta = result === "tesSUCCESS"
        ? applyToOpen(account, fee, result, [{ to: destination, drops: amount }], {
          delivered_amount: amount.toString(),
        })
        : applyToOpen(account, fee, result, []);
      const stored = { ...tx };
      pending.push({ hash, tx: { ...stored, hash }, meta });
      return engine(result);
    },
  };

  /** The answer as JSON text, generated transactions written in place of their markers. */
  function answerText(reply: unknown): string {
    const text = JSON.stringify(reply);
    if (!opts.mainnetLedgers) return text;
    let out = "";
    let from = 0;
    for (let at = text.indexOf(MARKER); at >= 0; at = text.indexOf(MARKER, from)) {
      const end = text.indexOf('"', at);
      const [n, a, b] = text.slice(at + MARKER.length, end).split(":").map(Number);
      const l = ledgerByIndex(n)!;
      // The marker is a JSON string: its quotes go with it.
      out += text.slice(from, at - 1) + entriesJson(n, a, b, l.apiVersion, closeTimeIso(l));
      from = end + 1;
    }
    return out + text.slice(from);
  }

  const served = { requests: 0, bytes: 0, refused: 0 };
  let usage = 0;
  let usageAt = performance.now();
  /** Charges one request to the client's usage balance; false when the balance was already at the limit. */
  function withinRate(): boolean {
    const limit = opts.rateLimit;
    if (!limit) return true;
    const now = performance.now();
    usage *= Math.exp(-(now - usageAt) / limit.windowMs);
    usageAt = now;
    if (usage >= limit.limit) return false;
    usage += 1;
    return true;
  }

  /** `text` as a response, sent at `bytesPerSecond` when set, refused with 413 above `maxResponseBytes`. */
  function send(text: string): Response {
    if (opts.maxResponseBytes !== undefined && text.length > opts.maxResponseBytes) {
      served.refused++;
      return responseTooLarge(opts.maxResponseBytes);
    }
    const bytes = new TextEncoder().encode(text);
    served.bytes += bytes.length;
    return jsonAt(bytes, opts.bytesPerSecond);
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    served.requests++;
    let body: { method?: unknown; params?: unknown };
    try {
      body = await req.json();
    } catch {
      return new Response("bad request", { status: 400 });
    }
    const method = String(body.method);
    calls.set(method, (calls.get(method) ?? 0) + 1);
    if (!withinRate()) {
      served.refused++;
      if (opts.rateLimit!.answer === "slowDown") {
        return send(JSON.stringify({ result: { status: "error", error: "slowDown", error_message: SLOW_DOWN } }));
      }
      return new Response("Server is overloaded\n", { status: 503 });
    }
    const params = (Array.isArray(body.params) ? body.params[0] : {}) as Record<string, unknown> ?? {};
    const handler = methods[method];
    let result: Record<string, unknown>;
    if (!handler) {
      result = { status: "error", error: "unknownCmd", error_message: "Unknown method.", request: body };
    } else {
      try {
        result = { ...handler(params), status: "success" };
        const edit = tampered.get(method);
        if (edit) {
          result = structuredClone(result);
          edit(result);
        }
      } catch (err) {
        if (!(err instanceof RpcError)) throw err;
        result = {
          status: "error",
          error: err.code,
          error_message: err.message,
          request: { command: method, ...params },
          ...err.extra,
        };
      }
    }
    return send(answerText({ result }));
  });
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}/`,
    hooks,
    served,
    async close() {
      await server.shutdown();
    },
  };
}
