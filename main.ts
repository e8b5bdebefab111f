/** Composition root: read config, build services, serve. */
import { buildServices, createApp, pipelineRuntime } from "./app.ts";
import { formatError } from "./chains/shared/redact.ts";
import { configFromProcess } from "./config/env.ts";

async function start() {
  const config = configFromProcess();
  return { config, services: await buildServices(config) };
}

const { config, services } = await start().catch((err) => {
  // A refused start names its reason, redacted: RPC failures quote URLs that carry API keys.
  console.error(`refusing to start: ${formatError(err)}`);
  Deno.exit(1);
});
const app = createApp(services);
const pipeline = pipelineRuntime(services);
pipeline?.start();
if (!pipeline) console.warn("PIPELINE=off: serving the API without watchers or order actors");
Deno.serve({
  port: config.port,
  onListen: ({ hostname, port }) =>
    console.log(`listening on http://${hostname}:${port} (chain mode ${config.chainMode}, KV ${config.kvPath})`),
}, app.fetch);
