/**
 * Starts the real service on a temporary KV file and a free loopback port, for API tests over real HTTP.
 * Secrets are generated into the temporary folder exactly as `deno task dev` does in sim mode.
 */
import { createOperatorKey, type OperatorScope } from "../../kv/operator_keys.ts";
import { buildServices, createApp, pipelineRuntime } from "../../app.ts";
import type { Services } from "../../routes/services.ts";
import type { PipelineRuntime } from "../../actors/runtime.ts";
import { loadConfig } from "../../config/env.ts";
import { loadSecrets } from "../../config/secrets.ts";
import { createApiKey } from "../../kv/api_keys.ts";
import { API_ERRORS } from "../../messages.ts";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export const TEST_BASE_URL = "https://api.test";

export interface TestServer {
  url: string;
  services: Services;
  /** The app being served (tests/openapi_test.ts walks its routes). */
  app?: ReturnType<typeof createApp>;
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
    app,
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

/**
 * Another server process's worth of the service on `of`'s KV file and secrets: its own KV handle, app and port, as a
 * second instance sharing one KV would run (in-process state is not shared). `env` as for `startTestServer`.
 * close() leaves the files to `of`.
 */
export async function startPeerServer(of: TestServer, env: Record<string, string> = {}): Promise<TestServer> {
  const config = loadConfig({ KV_PATH: of.kvPath, BASE_URL: TEST_BASE_URL, PIPELINE: "off", ...env });
  const services = await buildServices(config, await loadSecrets(config, () => {}));
  const app = createApp(services);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    services,
    app,
    pipeline: null,
    dir: of.dir,
    kvPath: of.kvPath,
    async close() {
      services.shutdown.abort();
      await server.shutdown();
      services.kv.close();
    },
  };
}

/**
 * A small client: JSON in, `{status, body}` out. Every response is checked against the server's `/openapi.json`
 * (`checkResponse`): a status or body the document does not describe fails the test that received it.
 */
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
  await checkResponse(server, method, path, res.status, res.headers.get("Content-Type"), parsed);
  return { status: res.status, body: parsed };
}

// ---- every response a test receives validates against the server's OpenAPI document ----

// deno-lint-ignore no-explicit-any
type Json = any;

/** The document of one server and its compiled response validators (JSON Schema 2020-12, as OpenAPI 3.1 says). */
export class ResponseChecker {
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #paths: { template: string; pattern: RegExp; params: number }[];

  constructor(readonly document: Json) {
    addFormats.default(this.#ajv);
    this.#ajv.addSchema(document, "openapi.json");
    this.#paths = Object.keys(document.paths ?? {}).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`),
      params: (template.match(/\{/g) ?? []).length,
    }));
  }

  /** The document's path template serving `path` (a literal path wins over a templated one), or undefined. */
  template(path: string): string | undefined {
    const matches = this.#paths.filter((p) => p.pattern.test(path)).sort((a, b) => a.params - b.params);
    return matches[0]?.template;
  }

  /** Why this response does not match the document, or null when it does. */
  problem(method: string, url: string, status: number, contentType: string | null, body: unknown): string | null {
    const path = url.split("?")[0];
    const m = method.toLowerCase();
    const template = this.template(path);
    const operation = template === undefined ? undefined : this.document.paths[template][m];
    if (!operation) {
      // No documented route: only the service's 404 for unknown routes is a right answer.
      const notFound = { success: false, message: API_ERRORS.notFound.message };
      if (status === 404 && JSON.stringify(body) === JSON.stringify(notFound)) return null;
      return `${method} ${path} is not in /openapi.json, yet it answered ${status} ${JSON.stringify(body)}`;
    }
    const responses = operation.responses ?? {};
    const key = String(status) in responses ? String(status) : "default" in responses ? "default" : undefined;
    if (key === undefined) {
      return `${method} ${template} answered ${status}, a status /openapi.json does not list for it ` +
        `(documented: ${Object.keys(responses).join(", ")}); body ${JSON.stringify(body)}`;
    }
    const content = responses[key].content as Record<string, unknown> | undefined;
    if (!content) return status === 304 || body === "" ? null : `${method} ${template} ${status}: body undocumented`;
    const mediaType = (contentType ?? "").split(";")[0].trim().toLowerCase();
    if (!(mediaType in content)) {
      return `${method} ${template} ${status} answered ${contentType}, documented: ${Object.keys(content).join(", ")}`;
    }
    if (!/json$/.test(mediaType)) return null;
    const pointer = ["paths", template!, m, "responses", key, "content", mediaType, "schema"]
      .map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");
    let validate = this.#validators.get(pointer);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: `openapi.json#/${pointer}` });
      this.#validators.set(pointer, validate);
    }
    if (validate(body)) return null;
    const errors = validate.errors!.map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
    return `${method} ${template} ${status}: the body does not match /openapi.json (${errors}): ${
      JSON.stringify(body)
    }`;
  }
}

const checkers = new WeakMap<TestServer, Promise<ResponseChecker>>();

/** The checker of `server`, built from its `/openapi.json` on first use. */
export function responseChecker(server: TestServer): Promise<ResponseChecker> {
  let checker = checkers.get(server);
  if (!checker) {
    checker = fetch(`${server.url}/openapi.json`).then(async (res) => {
      if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
      return new ResponseChecker(await res.json());
    });
    checkers.set(server, checker);
  }
  return checker;
}

/** Throws, failing the test, when the response is one the server's document does not describe. */
export async function checkResponse(
  server: TestServer,
  method: string,
  path: string,
  status: number,
  contentType: string | null,
  body: unknown,
): Promise<void> {
  const problem = (await responseChecker(server)).problem(method, path, status, contentType, body);
  if (problem) throw new Error(`response not as documented: ${problem}`);
}

export async function newApiKey(server: TestServer, partner = "partner-a", expiresInDays?: number): Promise<string> {
  return (await createApiKey(server.services.kv, partner, { expiresInDays })).apiKey;
}

/** An operator key (kv/operator_keys.ts) with `scopes`, for `Authorization: Bearer` on /admin and /metrics. */
export async function operatorKeyFor(
  server: TestServer,
  scopes: OperatorScope[] = ["read", "operate", "keys", "metrics"],
  name = "test-operator",
): Promise<string> {
  return (await createOperatorKey(server.services.kv, { name, scopes, by: "test" })).operatorKey;
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
