/**
 * Mainnet-sized XRP Ledger ledgers as rippled's `ledger` method (`transactions: true, expand: true`) lists their
 * transactions, generated from the ledger index each time they are asked for, so that neither a test's server nor its
 * reader holds thousands of them (docs/scan-budget.md, "XRP Ledger").
 *
 * Shape, from public statistics (xrpl.org "XRPL Metrics" / livenet.xrpl.org and XRPScan's metrics, 2024-2026): about
 * 1.5 to 2 million transactions a day over about 24,000 to 24,700 validated ledgers (a ledger closes every 3.5 to 4 s),
 * so 60 to 90 transactions per ledger, 75 on average here, each ledger between 0.6 and 1.4 times that. The mix (same
 * sources, by transaction type): Payments about half (XRP about four in five of them, issued currencies the rest),
 * OfferCreate about a third (most crossing or placing DEX offers, with Offer, DirectoryNode and RippleState entries in
 * their metadata), OfferCancel, TrustSet, AMM deposits and withdrawals, NFToken and AccountSet the rest; a few per
 * cent end in a `tec` code (in the ledger, fee charged, nothing delivered). The metadata is shaped as rippled writes it
 * (AffectedNodes with ModifiedNode/CreatedNode/DeletedNode, FinalFields, PreviousFields, PreviousTxnID, LedgerIndex;
 * `delivered_amount` on every Payment). About 3 KB of JSON per transaction: ~220 KB per ledger.
 *
 * The accounts are someone else's: classic addresses of made-up account ids from a fixed pool (none is ever one of our
 * deposit addresses). Transaction hashes encode (ledger, position), so `tx` can answer one from its hash alone. Only
 * text is built, never objects.
 */
import { encodeAccountID } from "xrpl";

export interface MainnetLedgerShape {
  /** Average transactions per ledger (default 75); each ledger holds between 0.6 and 1.4 times that. */
  transactions?: number;
}

export const DEFAULT_TRANSACTIONS = 75;
const POOL = 4096;
/** A non-standard currency code: 40 hex digits ("SOLO"), as the XRPL writes codes longer than three letters. */
const SOLO = "534F4C4F00000000000000000000000000000000";
/** The hash of generated transaction `t` of ledger `n`: 8 hex digits of `n`, 4 of `t`, then this tag. */
const HASH_TAG = "C0DE".repeat(13);

/** A deterministic account of someone else's. */
function accountOf(seed: number): string {
  const id = new Uint8Array(20);
  let x = (seed * 2654435761 + 0x6d2b79f5) >>> 0;
  for (let i = 0; i < 20; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    id[i] = x & 0xff;
  }
  return encodeAccountID(id);
}

const pool = Array.from({ length: POOL }, (_, i) => accountOf(i + 1));
const acct = (k: number) => pool[((k % POOL) + POOL) % POOL];

/** A 64-hex-digit id (ledger entry index, previous transaction id) from two numbers. */
function hex64(a: number, b: number): string {
  const head = ((a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0")).toUpperCase();
  return head + "9E3779B97F4A7C15F39CC0605CEDC8341082276BF3A27251".slice(0, 48);
}

export function generatedHash(ledger: number, t: number): string {
  return ((ledger >>> 0).toString(16).padStart(8, "0") + t.toString(16).padStart(4, "0")).toUpperCase() + HASH_TAG;
}

/** The (ledger, position) a generated hash stands for, or null for any other hash. */
export function generatedPlace(hash: string): { ledger: number; t: number } | null {
  const h = hash.toUpperCase();
  if (h.length !== 64 || !h.endsWith(HASH_TAG)) return null;
  return { ledger: parseInt(h.slice(0, 8), 16), t: parseInt(h.slice(8, 12), 16) };
}

/** How many generated transactions ledger `n` holds. */
export function generatedCount(n: number, shape: MainnetLedgerShape = {}): number {
  const avg = shape.transactions ?? DEFAULT_TRANSACTIONS;
  const spread = (((n * 2654435761) >>> 0) % 81) / 100; // 0 .. 0.8
  return Math.max(2, Math.round(avg * (0.6 + spread)));
}

const SIG = "3045022100" + "A1B2C3D4E5F60718293A4B5C6D7E8F90".repeat(2) + "0220" +
  "0F1E2D3C4B5A69788796A5B4C3D2E1F0".repeat(2);
const PUBKEY = "02" + "6B3A1D5E7F9C2B4D6E8F0A1C3E5B7D9F".repeat(2);

function rootNode(
  account: string,
  k: number,
  ledger: number,
  balance: number,
  delta: number,
  seq: number,
  owner: number,
): string {
  const seqChange = seq > 0 ? `,"Sequence":${seq - 1}` : "";
  return `{"ModifiedNode":{"FinalFields":{"Account":"${account}","Balance":"${balance + delta}","Flags":0,` +
    `"OwnerCount":${owner},"Sequence":${seq > 0 ? seq : 1000 + k}},"LedgerEntryType":"AccountRoot",` +
    `"LedgerIndex":"${hex64(k, 1)}","PreviousFields":{"Balance":"${balance}"${seqChange}},` +
    `"PreviousTxnID":"${hex64(ledger - 3, k)}","PreviousTxnLgrSeq":${ledger - 3}}}`;
}

function rippleState(k: number, ledger: number, currency: string, issuer: string, low: string, value: string): string {
  return `{"ModifiedNode":{"FinalFields":{"Balance":{"currency":"${currency}","issuer":"rrrrrrrrrrrrrrrrrrrrBZbvji",` +
    `"value":"${value}"},"Flags":131072,"HighLimit":{"currency":"${currency}","issuer":"${issuer}","value":"0"},` +
    `"HighNode":"0","LowLimit":{"currency":"${currency}","issuer":"${low}","value":"1000000000"},"LowNode":"0"},` +
    `"LedgerEntryType":"RippleState","LedgerIndex":"${hex64(k, 2)}","PreviousFields":{"Balance":{"currency":` +
    `"${currency}","issuer":"rrrrrrrrrrrrrrrrrrrrBZbvji","value":"${value}1"}},"PreviousTxnID":` +
    `"${hex64(ledger - 5, k)}","PreviousTxnLgrSeq":${ledger - 5}}}`;
}

function offerNode(kind: "Deleted" | "Modified" | "Created", k: number, ledger: number, owner: string): string {
  const fields = `"Account":"${owner}","BookDirectory":"${hex64(k, 3)}","BookNode":"0","Flags":0,"OwnerNode":"0",` +
    `"Sequence":${k % 100000},"TakerGets":"${(k % 9000 + 1) * 1000000}","TakerPays":{"currency":"USD","issuer":` +
    `"${acct(7)}","value":"${k % 9000 + 1}.52"}`;
  if (kind === "Created") {
    return `{"CreatedNode":{"LedgerEntryType":"Offer","LedgerIndex":"${hex64(k, 4)}","NewFields":{${fields}}}}`;
  }
  const prev = kind === "Modified"
    ? `,"PreviousFields":{"TakerGets":"${(k % 9000 + 2) * 1000000}"},"PreviousTxnID":"${hex64(ledger - 9, k)}",` +
      `"PreviousTxnLgrSeq":${ledger - 9}`
    : "";
  return `{"${kind}Node":{"FinalFields":{${fields}},"LedgerEntryType":"Offer","LedgerIndex":"${hex64(k, 4)}"${prev}}}`;
}

function directoryNode(k: number, owner: string): string {
  return `{"ModifiedNode":{"FinalFields":{"Flags":0,"IndexNext":"0","IndexPrevious":"0","Owner":"${owner}",` +
    `"RootIndex":"${hex64(k, 5)}"},"LedgerEntryType":"DirectoryNode","LedgerIndex":"${hex64(k, 5)}"}}`;
}

interface Parts {
  tx: string;
  meta: string;
  /** XRP Payments: `Amount` is `DeliverMax` in API v2. */
  payment: boolean;
}

/** Transaction `t` of ledger `n`: its fields and metadata as JSON object bodies (without braces). */
function partsOf(n: number, t: number, index: number): Parts {
  const k = (n * 7919 + t * 104729) >>> 0;
  const kind = k % 100;
  const from = acct(k);
  const to = acct(k * 31 + 17);
  const fee = 10 + (k % 5) * 2;
  const seq = 80_000_000 + (k % 5_000_000);
  const balance = 5_000_000_000 + (k % 900_000_000);
  const failed = k % 29 === 0;
  const result = failed ? (kind < 50 ? "tecPATH_DRY" : "tecKILLED") : "tesSUCCESS";
  const common = `"Account":"${from}","Fee":"${fee}","Flags":${kind < 40 ? 0 : 2147483648},` +
    `"LastLedgerSequence":${n + 20},"Sequence":${seq},"SigningPubKey":"${PUBKEY}","TxnSignature":"${SIG}"`;
  const end = `"TransactionIndex":${index},"TransactionResult":"${result}"`;
  const feeOnly = rootNode(from, k, n, balance, -fee, seq + 1, 3);
  if (kind < 40) {
    // An XRP Payment (a destination tag on most: exchanges' deposits).
    const drops = 1_000_000 + (k % 250_000) * 1_000;
    const tx = `${common},"Destination":"${to}","DestinationTag":${k % 4_000_000},"TransactionType":"Payment",` +
      `"Amount":"${drops}"`;
    if (failed) return { tx, meta: `"AffectedNodes":[${feeOnly}],${end}`, payment: true };
    const nodes = `${rootNode(from, k, n, balance, -fee - drops, seq + 1, 3)},` +
      `${rootNode(to, k * 31 + 17, n, balance * 3, drops, 0, 0)}`;
    return { tx, meta: `"AffectedNodes":[${nodes}],${end},"delivered_amount":"${drops}"`, payment: true };
  }
  if (kind < 50) {
    // An issued-currency Payment through trust lines (rippling through the issuer).
    const value = `${(k % 99_999) / 100}`;
    const amount = `{"currency":"USD","issuer":"${acct(7)}","value":"${value}"}`;
    const tx = `${common},"Destination":"${to}","SendMax":${amount},"TransactionType":"Payment","Amount":${amount}`;
    if (failed) return { tx, meta: `"AffectedNodes":[${feeOnly}],${end}`, payment: false };
    const nodes = `${feeOnly},${rippleState(k, n, "USD", acct(7), from, `-${value}`)},` +
      `${rippleState(k + 1, n, "USD", acct(7), to, value)}`;
    return { tx, meta: `"AffectedNodes":[${nodes}],${end},"delivered_amount":${amount}`, payment: false };
  }
  if (kind < 84) {
    // OfferCreate: crosses one or two offers (consumed, partly consumed) and places the rest.
    const tx = `${common},"TakerGets":"${(k % 9000 + 1) * 1000000}","TakerPays":{"currency":"USD","issuer":` +
      `"${acct(7)}","value":"${k % 9000 + 1}.52"},"TransactionType":"OfferCreate"`;
    if (failed) return { tx, meta: `"AffectedNodes":[${feeOnly}],${end}`, payment: false };
    const maker = acct(k * 13 + 5);
    const nodes = [
      rootNode(from, k, n, balance, -fee - 1_000_000, seq + 1, 4),
      rootNode(maker, k * 13 + 5, n, balance, 1_000_000, 0, 6),
      offerNode(k % 3 === 0 ? "Modified" : "Deleted", k, n, maker),
      offerNode("Created", k + 1, n, from),
      directoryNode(k, from),
      directoryNode(k + 1, maker),
      rippleState(k, n, "USD", acct(7), from, "120.5"),
      rippleState(k + 1, n, "USD", acct(7), maker, "80.25"),
    ];
    return { tx, meta: `"AffectedNodes":[${nodes.join(",")}],${end}`, payment: false };
  }
  if (kind < 90) {
    const tx = `${common},"OfferSequence":${seq - 3},"TransactionType":"OfferCancel"`;
    const nodes = `${rootNode(from, k, n, balance, -fee, seq + 1, 2)},${offerNode("Deleted", k, n, from)},` +
      `${directoryNode(k, from)}`;
    return { tx, meta: `"AffectedNodes":[${nodes}],${end}`, payment: false };
  }
  if (kind < 94) {
    const tx = `${common},"LimitAmount":{"currency":"${SOLO}","issuer":` +
      `"${acct(11)}","value":"1000000000"},"TransactionType":"TrustSet"`;
    const nodes = `${rootNode(from, k, n, balance, -fee, seq + 1, 5)},${directoryNode(k, from)},` +
      `${rippleState(k, n, SOLO, acct(11), from, "0")}`;
    return { tx, meta: `"AffectedNodes":[${nodes}],${end}`, payment: false };
  }
  if (kind < 96) {
    // AMMDeposit: XRP and a token into a pool; its AMM account's root and the LP token line change.
    const amm = acct(k % 64 + 9000);
    const tx = `${common},"Amount":"${(k % 1000 + 1) * 1000000}","Asset":{"currency":"XRP"},"Asset2":{"currency":` +
      `"USD","issuer":"${acct(7)}"},"TransactionType":"AMMDeposit"`;
    const nodes = `${rootNode(from, k, n, balance, -fee - 5_000_000, seq + 1, 4)},` +
      `${rootNode(amm, k % 64 + 9000, n, balance * 40, 5_000_000, 0, 1)},` +
      `{"ModifiedNode":{"FinalFields":{"Account":"${amm}","Asset":{"currency":"XRP"},"Asset2":{"currency":"USD",` +
      `"issuer":"${acct(7)}"},"LPTokenBalance":{"currency":"03930D02208264E2E40EC1B0C09E4DB96EE197B1","issuer":` +
      `"${amm}","value":"8123456.789"},"TradingFee":500},"LedgerEntryType":"AMM","LedgerIndex":"${hex64(k, 6)}"}},` +
      `${rippleState(k, n, "USD", acct(7), amm, "4500000")}`;
    return { tx, meta: `"AffectedNodes":[${nodes}],${end}`, payment: false };
  }
  if (kind < 98) {
    const tx = `${common},"NFTokenTaxon":0,"TransferFee":500,"URI":"${"697066733A2F2F".repeat(8)}",` +
      `"TransactionType":"NFTokenMint"`;
    const nodes = `${rootNode(from, k, n, balance, -fee, seq + 1, 7)},{"ModifiedNode":{"FinalFields":{"Flags":0,` +
      `"NFTokens":[{"NFToken":{"NFTokenID":"${hex64(k, 7)}","URI":"${"697066733A2F2F".repeat(8)}"}}]},` +
      `"LedgerEntryType":"NFTokenPage","LedgerIndex":"${hex64(k, 8)}"}}`;
    return { tx, meta: `"AffectedNodes":[${nodes}],${end}`, payment: false };
  }
  const tx = `${common},"SetFlag":8,"TransactionType":"AccountSet"`;
  return { tx, meta: `"AffectedNodes":[${rootNode(from, k, n, balance, -fee, seq + 1, 1)}],${end}`, payment: false };
}

/** Generated transaction `t` of ledger `n` as a ledger's `transactions` entry lists it, in API `version`. */
export function entryJson(n: number, t: number, version: 1 | 2, closeTimeIso: string): string {
  const { tx, meta, payment } = partsOf(n, t, t);
  const hash = generatedHash(n, t);
  if (version === 1) return `{${tx},"hash":"${hash}","metaData":{${meta}}}`;
  const fields = payment ? tx.replace(`"Amount":`, `"DeliverMax":`) : tx;
  return `{"close_time_iso":"${closeTimeIso}","hash":"${hash}","ledger_index":${n},"meta":{${meta}},` +
    `"tx_json":{${fields}}}`;
}

/** Entries `from` (inclusive) to `to` (exclusive) of ledger `n`, comma-separated. */
export function entriesJson(n: number, from: number, to: number, version: 1 | 2, closeTimeIso: string): string {
  const out: string[] = [];
  for (let t = from; t < to; t++) out.push(entryJson(n, t, version, closeTimeIso));
  return out.join(",");
}
