/** Composition root: read config, build services, serve. */
import { buildServices, createApp, pipelineRuntime } from "./app.ts";
import { configFromProcess } from "./config/env.ts";

const config = configFromProcess();
const services = await buildServices(config);
const app = createApp(services);
const pipeline = pipelineRuntime(services);
pipeline?.start();
if (!pipeline) console.warn("PIPELINE=off: serving the API without watchers or order actors");
Deno.serve({
  port: config.port,
  onListen: ({ hostname, port }) =>
    console.log(`listening on http://${hostname}:${port} (chain mode ${config.chainMode}, KV ${config.kvPath})`),
}, app.fetch);
