/** Seeds `count` orders for one wallet, 50 per commit: mints and burns alternating, every third one pending. */
import { addOrderCreate } from "../../kv/orders.ts";
import { makeOrder } from "../../tests/support/orders.ts";

export async function seedOrders(kv: Deno.Kv, wallet: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    const atomic = kv.atomic();
    for (let j = i; j < Math.min(count, i + 50); j++) {
      addOrderCreate(atomic, makeOrder(wallet, j % 2 ? "mint" : "burn", j % 3 ? "completed" : "pending", j));
    }
    if (!(await atomic.commit()).ok) throw new Error("seeding failed");
  }
}
