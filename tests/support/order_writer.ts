/**
 * A second process that changes orders on a KV file, for read-your-writes tests: each stdin line `<orderId> <status>`
 * moves that order to the status (tests/support/orders.ts `inStatus`) in one atomic and answers `done <id>` once it
 * committed. Run: deno run -A --unstable-kv tests/support/order_writer.ts <kvPath>
 */
import { updateOrder } from "../../kv/orders.ts";
import { type OrderStatus } from "../../model/order.ts";
import { inStatus } from "./orders.ts";

const kv = await Deno.openKv(Deno.args[0]);
const encoder = new TextEncoder();
let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf("\n")) >= 0) {
    const [id, status] = buffered.slice(0, newline).trim().split(" ");
    buffered = buffered.slice(newline + 1);
    const changed = await updateOrder(kv, id, (o) => inStatus(o, status as OrderStatus));
    await Deno.stdout.write(encoder.encode(`${changed ? "done" : "missing"} ${id}\n`));
  }
}
kv.close();
