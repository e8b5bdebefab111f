// The doorbell of an order's actor (docs/architecture.md "Actors on Deno KV": KV state is the truth and the queue is a
// doorbell). Its own module, so the watcher that rings it and the actor that answers it need not import each other.
export const WAKE = "wake" as const;
export interface WakeMessage {
  kind: typeof WAKE;
  orderId: string;
}
