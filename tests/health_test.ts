/**
 * Probes and the shutdown sequence: /healthz (liveness) and /readyz (readiness) over real HTTP on a real service, and
 * actors/shutdown.ts's order, bound and exit codes with its process exit injected (tests/graceful_shutdown_test.ts
 * sends real SIGTERMs to the real server).
 */
import assert from "node:assert/strict";
import { createApp } from "../app.ts";
import { Shutdown, type ShutdownParts } from "../actors/shutdown.ts";
import { openKv } from "../kv/open.ts";
import { NOT_READY } from "../messages.ts";
import { healthRoutes } from "../routes/health.ts";
import { Readiness } from "../actors/readiness.ts";
import { startTestServer } from "./support/server.ts";

async function get(url: string) {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

Deno.test("/readyz: 503 Starting, 200 once ready, 503 Shutting down; /healthz stays 200 meanwhile", async () => {
  const server = await startTestServer();
  const readiness = new Readiness();
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    createApp(server.services, readiness).fetch,
  );
  const url = `http://127.0.0.1:${http.addr.port}`;
  try {
    assert.deepEqual(await get(`${url}/readyz`), {
      status: 503,
      body: { success: false, message: NOT_READY.starting },
    });
    assert.deepEqual(await get(`${url}/healthz`), {
      status: 200,
      body: { success: true, data: { status: "ok", chainMode: "sim" } },
    });
    readiness.markReady();
    assert.deepEqual(await get(`${url}/readyz`), {
      status: 200,
      body: { success: true, data: { status: "ready", chainMode: "sim" } },
    });
    assert.equal(readiness.stopping.aborted, false);
    readiness.markStopping();
    assert.equal(readiness.stopping.aborted, true);
    assert.deepEqual(await get(`${url}/readyz`), {
      status: 503,
      body: { success: false, message: NOT_READY.shuttingDown },
    });
    readiness.markReady(); // never back
    assert.equal((await get(`${url}/readyz`)).status, 503);
    assert.equal((await get(`${url}/healthz`)).status, 200);
    assert.deepEqual(NOT_READY, {
      starting: "Starting",
      shuttingDown: "Shutting down",
      kvUnreachable: "KV store unreachable",
    });
  } finally {
    await http.shutdown();
    await server.close();
  }
});

Deno.test("/readyz: 503 when the KV cannot be read (readiness said ready)", async () => {
  const server = await startTestServer();
  const readiness = new Readiness("ready");
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    createApp(server.services, readiness).fetch,
  );
  try {
    server.services.kv.close();
    assert.deepEqual(await get(`http://127.0.0.1:${http.addr.port}/readyz`), {
      status: 503,
      body: { success: false, message: NOT_READY.kvUnreachable },
    });
  } finally {
    await http.shutdown();
    await server.close().catch(() => {});
  }
});

Deno.test("/healthz and /readyz are declared for the OpenAPI document", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await openKv(`${dir}/kv.sqlite3`);
  try {
    const doc = healthRoutes(kv, "sim", new Readiness()).getOpenAPIDocument({
      openapi: "3.0.0",
      info: { title: "t", version: "1" },
    });
    assert.deepEqual(Object.keys(doc.paths ?? {}).sort(), ["/healthz", "/readyz"]);
    assert.deepEqual(Object.keys(doc.paths!["/readyz"]!.get!.responses!).sort(), ["200", "503"]);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

// ---- actors/shutdown.ts ----

interface Harness {
  shutdown: Shutdown;
  parts: ShutdownParts;
  events: string[];
  exits: number[];
  logs: string[];
  exited: Promise<number>;
  cleanup(): Promise<void>;
}

async function harness(
  opts: {
    stop?: () => Promise<void>;
    serverShutdown?: () => Promise<void>;
    flush?: () => Promise<unknown>;
    timeoutMs?: number;
    httpGraceMs?: number;
  } = {},
) {
  const dir = await Deno.makeTempDir();
  const kv = await openKv(`${dir}/kv.sqlite3`);
  const events: string[] = [];
  const exits: number[] = [];
  const logs: string[] = [];
  let exited: (code: number) => void = () => {};
  const exitedP = new Promise<number>((r) => (exited = r));
  const readiness = new Readiness("ready");
  const parts: ShutdownParts = {
    readiness,
    server: {
      shutdown: () => {
        events.push(`server (readiness ${readiness.state})`);
        return opts.serverShutdown?.() ?? Promise.resolve();
      },
    },
    runtime: {
      stop: opts.stop ?? (() => {
        events.push("runtime");
        return Promise.resolve();
      }),
    },
    kv,
    flush: [{
      name: "cursors",
      run: opts.flush ?? (async () => {
        await kv.get(["x"]); // the KV is still open for the flushes
        events.push("flush");
      }),
    }],
  };
  const shutdown = new Shutdown({
    timeoutMs: opts.timeoutMs ?? 5_000,
    httpGraceMs: opts.httpGraceMs,
    log: (line) => logs.push(line),
    exit: (code) => {
      exits.push(code);
      exited(code);
    },
  });
  return {
    shutdown,
    parts,
    events,
    exits,
    logs,
    exited: exitedP,
    async cleanup() {
      try {
        kv.close();
      } catch { /* closed by the shutdown */ }
      await Deno.remove(dir, { recursive: true });
    },
  } satisfies Harness;
}

Deno.test("shutdown: not ready first, then server and runtime, then flushes, then the KV closes; exit 0", async () => {
  const h = await harness();
  try {
    h.shutdown.attach(h.parts);
    assert.equal(h.shutdown.done, null); // attached, no signal yet: nothing happens
    h.shutdown.signal("SIGTERM");
    assert.equal(await h.shutdown.done, 0);
    assert.deepEqual(h.exits, [0]);
    assert.deepEqual(h.events, ["server (readiness stopping)", "runtime", "flush"]);
    await assert.rejects(() => h.parts.kv.get(["x"])); // closed
    assert.match(h.logs.at(-1)!, /^shutdown: clean after \d+ ms; exiting 0$/);
  } finally {
    await h.cleanup();
  }
});

Deno.test("shutdown: a signal while starting is acted on once the parts are attached", async () => {
  const h = await harness();
  try {
    h.shutdown.signal("SIGINT");
    assert.equal(h.shutdown.done, null);
    assert.deepEqual(h.events, []);
    h.shutdown.attach(h.parts);
    assert.equal(await h.shutdown.done, 0);
    assert.deepEqual(h.events, ["server (readiness stopping)", "runtime", "flush"]);
  } finally {
    await h.cleanup();
  }
});

Deno.test("shutdown: past the bound it exits 1 naming what it waited for; more signals change nothing", async () => {
  const hung = await harness({ stop: () => new Promise(() => {}), timeoutMs: 50 });
  // The bound's timer does not keep a process alive (it is unref'd); this test's process must wait for it.
  const alive = setInterval(() => {}, 1_000);
  try {
    hung.shutdown.attach(hung.parts);
    hung.shutdown.signal("SIGTERM");
    assert.equal(await hung.exited, 1);
    assert.match(hung.logs.at(-1)!, /not done after 50 ms \(still waiting for: actor steps and ticks in flight\)/);
  } finally {
    clearInterval(alive);
    await hung.cleanup();
  }
  const twice = await harness({ stop: () => new Promise(() => {}) });
  try {
    twice.shutdown.attach(twice.parts);
    twice.shutdown.signal("SIGINT");
    twice.shutdown.signal("SIGINT");
    twice.shutdown.signal("SIGTERM");
    assert.deepEqual(twice.exits, []);
    assert.equal(twice.logs.filter((l) => l.includes("received")).length, 1);
  } finally {
    await twice.cleanup();
  }
});

Deno.test("shutdown: a failing flush still closes the KV, and the exit code is 1", async () => {
  const h = await harness({ flush: () => Promise.reject(new Error("disk full")) });
  try {
    h.shutdown.attach(h.parts);
    h.shutdown.signal("SIGTERM");
    assert.equal(await h.shutdown.done, 1);
    assert.ok(h.logs.includes("shutdown: cursors failed: disk full"), h.logs.join("\n"));
    await assert.rejects(() => h.parts.kv.get(["x"]));
  } finally {
    await h.cleanup();
  }
});

Deno.test("shutdown: a response that never ends (an event stream) is cut after the HTTP grace; exit 0", async () => {
  const h = await harness({ serverShutdown: () => new Promise(() => {}), httpGraceMs: 30 });
  try {
    h.shutdown.attach(h.parts);
    h.shutdown.signal("SIGTERM");
    assert.equal(await h.shutdown.done, 0);
    assert.deepEqual(h.events, ["server (readiness stopping)", "runtime", "flush"]);
    assert.ok(
      h.logs.includes("shutdown: HTTP responses still open after 30 ms (streams); closing without them"),
      h.logs.join("\n"),
    );
  } finally {
    await h.cleanup();
  }
});
