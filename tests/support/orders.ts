/** Builds valid orders for tests that exercise listing and storage without the pipeline. */
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS, weiToNative } from "../../chains/catalog.ts";
import { newOrderId, type Order, type OrderStatus, type OrderType, withDetails } from "../../model/order.ts";

export function makeOrder(owner: string, type: OrderType, status: OrderStatus, i: number): Order {
  const native = NATIVE_CHAINS[i % NATIVE_CHAINS.length];
  const evm = EVM_CHAINS[i % EVM_CHAINS.length];
  const id = newOrderId();
  const now = new Date().toISOString();
  const wallet = owner.toLowerCase();
  const sourceChain = type === "mint" ? native : evm;
  const common = {
    id,
    status: "pending" as const,
    sourceChain,
    destinationChain: type === "mint" ? evm : native,
    amount: String(1_000_000_000 + i),
    sourceWallet: type === "mint" ? `native-sender-${i}` : wallet,
    destinationWallet: type === "mint" ? wallet : `native-destination-${i}`,
    workflowId: `order-${id}`,
    transactionHash: null,
    errorMessage: null,
    createdAt: now,
    updatedAt: now,
    owner: wallet,
  };
  const details = {
    source: { chain: sourceChain, txHash: `tx-${id}`, index: i, blockNumber: i },
    depositId: `0x${id.replaceAll("-", "").padStart(64, "0")}`,
    confirmBy: now,
  };
  const pending: Order = type === "mint"
    ? { ...common, type, token: NATIVE[native].token.symbol, details }
    : { ...common, type, token: NATIVE[native].uAsset.symbol, details: { ...details, memo: null } };
  return inStatus(pending, status);
}

/**
 * The order moved to `status` with what that step requires (model/order.ts): a recorded transaction while sending and
 * once completed, a burn's payout amounts, the outcome fields of failed and cancelled; what the step must not have
 * removed. Values already on the order (a transaction hash, an error message) are kept.
 */
export function inStatus(o: Order, status: OrderStatus): Order {
  const sent = status === "minting" || status === "burning" || status === "completed";
  const intent = sent
    ? o.details.intent ?? {
      chain: o.destinationChain,
      txHash: `0x${o.id.replaceAll("-", "").padStart(64, "f")}`,
      raw: "0x00",
      preparedAt: o.createdAt,
    }
    : undefined;
  const native = NATIVE_CHAINS.find((c) => c === o.destinationChain);
  const payout = o.type === "burn" && sent && native ? weiToNative(native, BigInt(o.amount)) : undefined;
  return withDetails(o, {
    intent,
    cancelReason: status === "cancelled" ? o.details.cancelReason ?? "cancelled in a test" : undefined,
    ...(payout ? { nativeAmount: payout.native.toString(), remainderWei: payout.remainderWei.toString() } : {}),
  }, {
    status,
    transactionHash: status === "completed"
      ? o.transactionHash ?? intent?.txHash ?? null
      : status === "failed"
      ? o.transactionHash
      : null,
    errorMessage: status === "failed" ? o.errorMessage ?? "Insufficient deposit amount" : null,
  });
}
