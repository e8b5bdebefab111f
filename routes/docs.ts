/**
 * The partner reference (docs/openapi.md): `GET /openapi.json`, the OpenAPI 3.1 document generated from the routers'
 * zod schemas, and `GET /docs`, a page rendering it with Scalar's API reference (npm @scalar/api-reference, pinned in
 * deno.json). The page needs nothing but this server: its script is served from `/docs/scalar.js` out of
 * routes/docs_bundle.generated.ts (cli/docs_bundle.ts explains why a generated module), Scalar's web fonts,
 * telemetry and AI agent are off, and the document comes from `/openapi.json`.
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Env } from "hono";
import { z } from "zod";
import { SCALAR_GZIP_BASE64, SCALAR_SHA256 } from "./docs_bundle.generated.ts";
import { TAG_DESCRIPTIONS, TAGS } from "./openapi.ts";
import { documentIdempotency } from "./idempotency.ts";
import { documentBodyLimit } from "./body_limit.ts";

export const OPENAPI_PATH = "/openapi.json";
export const DOCS_PATH = "/docs";
export const DOCS_SCRIPT_PATH = "/docs/scalar.js";

export interface DocumentInfo {
  /** The public base URL of the API (spec `{base_url}`): the document's server. */
  baseUrl: string;
  /** Where the token endpoints are served (spec `{auth_url}`), for the description. */
  authUrl: string;
  chainMode: string;
}

type OpenApiDocument = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;

/** The OpenAPI 3.1 document of every route mounted on `app` so far. */
export function openApiDocument(app: OpenAPIHono<Env>, info: DocumentInfo): OpenApiDocument {
  const doc = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Issuance and redemption API",
      version: "1.0.0",
      description: "Native coins (SOL, XRP, SUI, DOGE, ZEC) to uAssets on EVM chains and back. Every answer is the " +
        "envelope `{success: true, data}` or `{success: false, message, error?}`. Token endpoints are under " +
        `${info.authUrl}. Amounts are integer strings in the token's smallest unit.` +
        (info.chainMode === "live" ? "" : ` This server runs CHAIN_MODE=${info.chainMode}: the Simulator routes ` +
          "drive its simulated chains."),
    },
    servers: [{ url: info.baseUrl }],
    tags: Object.entries(TAG_DESCRIPTIONS).map(([name, description]) => ({ name, description })),
  });
  // Only tags some route uses (a live server has no Simulator routes).
  const used = new Set(
    Object.values(doc.paths ?? {}).flatMap((item) =>
      Object.values(item as Record<string, { tags?: string[] }>).flatMap((op) => op?.tags ?? [])
    ),
  );
  // What the app-wide middleware answers on every POST (and PUT), which the routes do not declare themselves.
  documentIdempotency(doc);
  documentBodyLimit(doc);
  return { ...doc, tags: doc.tags?.filter((t) => used.has(t.name)) };
}

/** The reference page: Scalar's standalone bundle from this server, reading this server's document. */
function docsPage(): string {
  const config = {
    url: OPENAPI_PATH,
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: "never",
    hideClientButton: true,
    defaultOpenAllTags: true,
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Issuance and redemption API reference</title>
</head>
<body>
<div id="app"></div>
<script src="${DOCS_SCRIPT_PATH}?v=${SCALAR_SHA256.slice(0, 16)}"></script>
<script>Scalar.createApiReference("#app", ${JSON.stringify(config)});</script>
</body>
</html>
`;
}

let scalarGzip: Uint8Array<ArrayBuffer> | undefined;
let scalarPlain: Promise<Uint8Array<ArrayBuffer>> | undefined;

/** The bundle as stored (gzip), decoded once. */
function bundleGzip(): Uint8Array<ArrayBuffer> {
  return scalarGzip ??= Uint8Array.fromBase64(SCALAR_GZIP_BASE64) as Uint8Array<ArrayBuffer>;
}

/** For a client that does not take gzip; decompressed once. */
function bundlePlain(): Promise<Uint8Array<ArrayBuffer>> {
  return scalarPlain ??= new Response(
    new Blob([bundleGzip()]).stream().pipeThrough(new DecompressionStream("gzip")),
  ).arrayBuffer().then((b) => new Uint8Array(b));
}

const documentRoute = createRoute({
  method: "get",
  path: OPENAPI_PATH,
  tags: [TAGS.reference],
  summary: "This document",
  description: "The OpenAPI 3.1 document of this server, generated from the schemas that validate its requests.",
  responses: {
    200: {
      description: "The OpenAPI document",
      content: { "application/json": { schema: z.object({ openapi: z.string() }).passthrough() } },
    },
  },
});

const docsRoute = createRoute({
  method: "get",
  path: DOCS_PATH,
  tags: [TAGS.reference],
  summary: "API reference page",
  description: "This document rendered for a browser; it loads nothing from other hosts.",
  responses: { 200: { description: "An HTML page", content: { "text/html": { schema: z.string() } } } },
});

const scriptRoute = createRoute({
  method: "get",
  path: DOCS_SCRIPT_PATH,
  tags: [TAGS.reference],
  summary: "The reference page's script",
  description: "Scalar's standalone API reference bundle, gzip-encoded for clients that accept it.",
  responses: {
    200: { description: "JavaScript", content: { "text/javascript": { schema: z.string() } } },
    304: { description: "Not modified (If-None-Match)" },
  },
});

/**
 * Mounts `/openapi.json`, `/docs` and `/docs/scalar.js` on `app`. The document is built on its first request, once
 * every router is mounted, and kept: routes do not change while the process runs.
 */
export function mountDocs(app: OpenAPIHono<Env>, info: DocumentInfo) {
  let json: string | undefined;
  // The handlers answer bodies built outside zod (`as never` lets the typed handler return them).
  app.openapi(documentRoute, (c) => {
    json ??= JSON.stringify(openApiDocument(app, info));
    return c.body(json, 200, { "Content-Type": "application/json" }) as never;
  });
  const page = docsPage();
  app.openapi(docsRoute, (c) => c.html(page) as never);
  app.openapi(scriptRoute, async (c) => {
    const headers: Record<string, string> = {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=31536000, immutable",
      ETag: `"${SCALAR_SHA256}"`,
      Vary: "Accept-Encoding",
    };
    if (c.req.header("If-None-Match") === headers.ETag) return c.body(null, 304, headers) as never;
    if (/\bgzip\b/.test(c.req.header("Accept-Encoding") ?? "")) {
      return c.body(bundleGzip(), 200, { ...headers, "Content-Encoding": "gzip" }) as never;
    }
    return c.body(await bundlePlain(), 200, headers) as never;
  });
}
