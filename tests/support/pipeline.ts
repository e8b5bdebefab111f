/** Helpers for end-to-end pipeline tests: drive the sim chains over HTTP and poll orders as a partner would. */
import assert from "node:assert/strict";
import { Deriver } from "../../chains/derivation.ts";
import { call, randomWallet, type TestServer, tokenFor } from "./server.ts";

/** Real addresses of every chain that are not ours (an unrelated published BIP39 mnemonic). */
export const outside = Deriver.fromMnemonic(
  "legal winner thank year wave sausage worth useful legal winner thank yellow",
);

/** A new partner wallet with its token. */
export async function partner(server: TestServer) {
  const wallet = randomWallet();
  return { wallet, token: await tokenFor(server, wallet) };
}

export async function depositAddress(server: TestServer, token: string, chain: string, destinationChain: string) {
  const res = await call(server, "POST", "/mint/wallets", { token, body: { chain, destinationChain } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.address as string;
}

export const FAST_PIPELINE = {
  PIPELINE: "on",
  SIM_BLOCK_MS: "40",
  SWEEP_MS: "40",
  SIM_CONFIRMATION_TIMEOUT_MS: "20000",
};

// deno-lint-ignore no-explicit-any
export type Json = any;

export async function sim(server: TestServer, path: string, body: unknown): Promise<Json> {
  const res = await call(server, "POST", `/sim/${path}`, { body });
  if (res.status !== 201) throw new Error(`POST /sim/${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

export async function balance(server: TestServer, chain: string, address: string, token?: string): Promise<bigint> {
  const qs = new URLSearchParams({ chain, address, ...(token ? { token } : {}) });
  const res = await call(server, "GET", `/sim/balances?${qs}`);
  if (res.status !== 200) throw new Error(`balances: ${res.status} ${JSON.stringify(res.body)}`);
  return BigInt(res.body.data.balance);
}

export async function allOrders(server: TestServer, token: string): Promise<Json[]> {
  const out: Json[] = [];
  for (let offset = 0;; offset += 100) {
    const res = await call(server, "GET", `/orders?limit=100&offset=${offset}`, { token });
    if (res.status !== 200) throw new Error(`orders: ${res.status} ${JSON.stringify(res.body)}`);
    out.push(...res.body.data.orders);
    if (!res.body.data.pagination.hasMore) return out;
  }
}

/**
 * Polls GET /orders until `done(orders)` holds, recording every status each order was seen in (the partner's view of
 * an order moving). Throws with the last orders seen after `timeoutMs`.
 */
export async function waitForOrders(
  server: TestServer,
  token: string,
  done: (orders: Json[]) => boolean,
  opts: { timeoutMs?: number; seen?: Map<string, string[]> } = {},
): Promise<Json[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  let orders: Json[] = [];
  while (Date.now() < deadline) {
    orders = await allOrders(server, token);
    for (const o of orders) {
      const statuses = opts.seen?.get(o.id) ?? [];
      if (statuses.at(-1) !== o.status) statuses.push(o.status);
      opts.seen?.set(o.id, statuses);
    }
    if (done(orders)) return orders;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for orders; last seen: ${JSON.stringify(orders, null, 1)}`);
}

export const terminal = (o: Json) => ["completed", "failed", "cancelled"].includes(o.status);
