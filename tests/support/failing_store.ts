/**
 * The real order routes over a KV file whose reads fail, behind a stand-in for the JWT gate (the caller is always
 * wallet 0xaaaa...), on a loopback port: how the routes answer when the store cannot be read.
 */
import { Hono } from "hono";
import { orderRoutes } from "../../routes/orders.ts";
import { onError } from "../../routes/errors.ts";
import type { AuthVariables } from "../../routes/jwt.ts";

const fail = () => Promise.reject(new Error("disk on fire"));

/** Calls `use(url)` with the base URL of such a server, then closes everything. */
export async function withFailingOrderStore(use: (url: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
  const failing = new Proxy(kv, {
    get(target, prop) {
      if (prop === "get" || prop === "getMany") return fail;
      if (prop === "list") return () => ({ [Symbol.asyncIterator]: () => ({ next: fail }) });
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const app = new Hono<{ Variables: AuthVariables }>();
  app.onError(onError(() => {}));
  app.use("*", async (c, next) => {
    c.set("wallet", "0x" + "a".repeat(40));
    await next();
  });
  app.route("/orders", orderRoutes(failing, () => {}));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  try {
    await use(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}
