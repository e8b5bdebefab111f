/** Builds valid orders for tests that exercise listing without the pipeline. */
import { EVM_CHAINS, NATIVE, NATIVE_CHAINS } from "../../chains/catalog.ts";
import { newOrderId, type Order, type OrderStatus, type OrderType } from "../../kv/orders.ts";

export function makeOrder(owner: string, type: OrderType, status: OrderStatus, i: number): Order {
  const native = NATIVE_CHAINS[i % NATIVE_CHAINS.length];
  const evm = EVM_CHAINS[i % EVM_CHAINS.length];
  const id = newOrderId();
  const now = new Date().toISOString();
  const wallet = owner.toLowerCase();
  return {
    id,
    type,
    status,
    sourceChain: type === "mint" ? native : evm,
    destinationChain: type === "mint" ? evm : native,
    token: type === "mint" ? NATIVE[native].token.symbol : NATIVE[native].uAsset.symbol,
    amount: String(1_000_000_000 + i),
    sourceWallet: type === "mint" ? `native-sender-${i}` : wallet,
    destinationWallet: type === "mint" ? wallet : `native-destination-${i}`,
    workflowId: `order-${id}`,
    transactionHash: status === "completed" ? `0x${i.toString(16).padStart(64, "0")}` : null,
    errorMessage: status === "failed" ? "Insufficient deposit amount" : null,
    createdAt: now,
    updatedAt: now,
    owner: wallet,
    details: {},
  };
}
