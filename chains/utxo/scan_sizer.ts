/**
 * The UTXO reader's bounds for sizing its block requests (chains/shared/batch_sizer.ts; docs/scan-budget.md,
 * "Dogecoin and Zcash").
 */

/**
 * Bytes one block request should bring back. A Dogecoin mainnet block is ~35 KB of hex (50 per request, 1.7 MB), a
 * Zcash one ~160 KB of verbosity 2 JSON (12 per request): at 8 MiB (Solana's target) a Zcash catch-up peaked ~45 MiB
 * higher (bench/scale.ts: 359 against 313-315 MiB) for no gain, requests being a small share of a day either way.
 */
export const UTXO_TARGET_RESPONSE_BYTES = 2 * 1024 * 1024;
/** Most blocks one request asks for, however small they are (a quiet regtest chain). */
export const MAX_SCAN_BATCH = 50;
