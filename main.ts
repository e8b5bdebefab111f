/** Composition root: read config, build services, serve. */
import { buildServices, createApp } from "./app.ts";
import { configFromProcess } from "./config/env.ts";

const config = configFromProcess();
const services = await buildServices(config);
const app = createApp(services);
Deno.serve({
  port: config.port,
  onListen: ({ hostname, port }) =>
    console.log(`listening on http://${hostname}:${port} (chain mode ${config.chainMode}, KV ${config.kvPath})`),
}, app.fetch);
