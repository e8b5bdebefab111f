/** A synthetic order event (a sol mint's), for webhook tests and benchmarks that emit events without a pipeline. */
import type { OrderEvent } from "../../kv/order_events.ts";
import { newOrderId, type OrderStatus } from "../../model/order.ts";

export function syntheticOrderEvent(owner: string, seq: number, orderId: string, status: OrderStatus): OrderEvent {
  const at = new Date().toISOString();
  return {
    id: newOrderId(),
    type: `order.${status}`,
    createdAt: at,
    owner,
    seq,
    order: {
      id: orderId,
      type: "mint",
      status,
      sourceChain: "sol",
      destinationChain: "base",
      token: "SOL",
      amount: "500000000",
      sourceWallet: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
      destinationWallet: owner,
      workflowId: `mint-${orderId}`,
      transactionHash: null,
      errorMessage: null,
      createdAt: at,
      updatedAt: at,
    },
  };
}
