/**
 * Every operator operation, served by the CLI and the admin API alike (actors/ops/op.ts). One line per module: an
 * operation listed here is in both, and in the OpenAPI document when it has an `http` route.
 */
import type { AnyOp } from "./op.ts";
import { AUDIT_OPS } from "./audit.ts";
import { OPERATOR_KEY_OPS } from "./operator_keys.ts";
import { KEY_OPS } from "./keys.ts";
import { JWT_KEY_OPS } from "./jwt_keys.ts";
import { WALLET_OPS } from "./wallets.ts";
import { WATCH_OPS } from "./watch.ts";
import { ORDER_OPS } from "./orders.ts";
import { TREASURY_OPS } from "./treasury.ts";
import { UTXO_OPS } from "./utxo.ts";
import { RECONCILE_OPS } from "./reconcile.ts";
import { CONTROL_OPS } from "./controls.ts";
import { HELD_OPS } from "./held.ts";
import { BURN_OPS } from "./burns.ts";
import { OVERVIEW_OPS } from "./overview.ts";
import { REFUND_OPS } from "./refunds.ts";
import { COLD_OPS } from "./cold.ts";
import { HOT_WALLET_OPS } from "./hot_wallets.ts";
import { ORDER_DETAIL_OPS } from "./order_detail.ts";

export const OPS: readonly AnyOp[] = [
  ...AUDIT_OPS,
  ...OPERATOR_KEY_OPS,
  ...KEY_OPS,
  ...JWT_KEY_OPS,
  ...WALLET_OPS,
  ...WATCH_OPS,
  ...ORDER_OPS,
  ...TREASURY_OPS,
  ...UTXO_OPS,
  ...RECONCILE_OPS,
  ...CONTROL_OPS,
  ...HELD_OPS,
  ...BURN_OPS,
  ...OVERVIEW_OPS,
  ...REFUND_OPS,
  ...COLD_OPS,
  ...HOT_WALLET_OPS,
  ...ORDER_DETAIL_OPS,
];

/** The operation the CLI words name (one or two words), or undefined. */
export function findOp(words: string[]): AnyOp | undefined {
  for (const n of [3, 2, 1]) {
    const name = words.slice(0, n).join(" ");
    const op = OPS.find((o) => o.name === name);
    if (op && words.length >= n) return op;
  }
  return undefined;
}
