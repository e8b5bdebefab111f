/**
 * Starts the real service on a temporary KV file and a free loopback port, for API tests over real HTTP.
 * Secrets are generated into the temporary folder exactly as `deno task dev` does in sim mode.
 */
import { buildServices, createApp, pipelineRuntime, type Services } from "../../app.ts";
import type { PipelineRuntime } from "../../actors/runtime.ts";
import { loadConfig } from "../../config/env.ts";
import { loadSecrets } from "../../config/secrets.ts";
import { createApiKey } from "../../kv/api_keys.ts";

export const TEST_BASE_URL = "https://api.test";

export interface TestServer {
  url: string;
  services: Services;
  /** Running when the server was started with PIPELINE=on. */
  pipeline: PipelineRuntime | null;
  dir: string;
  kvPath: string;
  close(): Promise<void>;
}

/**
 * `env` overrides the configuration; the order pipeline is off unless `PIPELINE: "on"` is passed (API tests then see
 * only what they write). The pipeline's log is silent unless TEST_LOG is set.
 */
export async function startTestServer(env: Record<string, string> = {}) {
  const dir = await Deno.makeTempDir({ prefix: "issuance-test-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const config = loadConfig({ KV_PATH: kvPath, BASE_URL: TEST_BASE_URL, PIPELINE: "off", ...env });
  const services = await buildServices(config, await loadSecrets(config, () => {}));
  if (services.pipeline && !Deno.env.get("TEST_LOG")) services.pipeline.log = () => {};
  const app = createApp(services);
  const pipeline = pipelineRuntime(services);
  pipeline?.start();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    services,
    pipeline,
    dir,
    kvPath,
    async close() {
      services.shutdown.abort(); // ends open event streams, which server.shutdown() would wait for
      await pipeline?.stop();
      await server.shutdown();
      services.kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  } satisfies TestServer;
}

/** A small client: JSON in, `{status, body}` out. */
export async function call(
  server: TestServer,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${server.url}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch { /* leave as text */ }
  return { status: res.status, body: parsed };
}

export async function newApiKey(server: TestServer, partner = "partner-a", expiresInDays?: number): Promise<string> {
  return (await createApiKey(server.services.kv, partner, { expiresInDays })).apiKey;
}

export async function tokenFor(server: TestServer, wallet: string, apiKey?: string): Promise<string> {
  const key = apiKey ?? await newApiKey(server);
  const res = await call(server, "POST", "/auth/token", {
    headers: { "X-API-Key": key },
    body: { walletAddress: wallet },
  });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.token;
}

/** A random EVM wallet address in upper-case hex (the service must store and compare it lowercase). */
export function randomWallet(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  return "0x" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("").toUpperCase();
}
