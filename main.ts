/** Composition root: read config, build services, serve; SIGTERM and SIGINT shut down gracefully (actors/shutdown.ts). */
import { buildServices, createApp, pipelineRuntime } from "./app.ts";
import { Shutdown } from "./actors/shutdown.ts";
import { formatError } from "./chains/shared/redact.ts";
import { configFromProcess } from "./config/env.ts";
import { healthcheck, Readiness } from "./routes/health.ts";

// `issuance healthcheck [/readyz]`: the Dockerfile's HEALTHCHECK probes the running server with the binary itself.
if (Deno.args[0] === "healthcheck") Deno.exit(await healthcheck(Deno.args.slice(1), { PORT: Deno.env.get("PORT") }));

// Listening from the start: a signal while starting is acted on once the service is up.
const shutdown = new Shutdown().listen();
const readiness = new Readiness();

async function start() {
  const config = configFromProcess();
  return { config, services: await buildServices(config) };
}

const { config, services } = await start().catch((err) => {
  // A refused start names its reason, redacted: RPC failures quote URLs that carry API keys.
  console.error(`refusing to start: ${formatError(err)}`);
  Deno.exit(1);
});
const app = createApp(services, readiness);
const pipeline = pipelineRuntime(services);
pipeline?.start();
if (!pipeline) console.warn("PIPELINE=off: serving the API without watchers or order actors");
const server = Deno.serve({
  port: config.port,
  onListen: ({ hostname, port }) =>
    console.log(`listening on http://${hostname}:${port} (chain mode ${config.chainMode}, KV ${config.kvPath})`),
}, app.fetch);
readiness.markReady();
shutdown.attach({ readiness, server, runtime: pipeline, kv: services.kv });
