/**
 * Composition root: read config, build services, register the cron jobs, serve; SIGTERM and SIGINT shut down
 * gracefully (actors/shutdown.ts).
 */
import { buildServices, createApp, pipelineRuntime } from "./app.ts";
import { cronJobs, registerCronJobs } from "./actors/cron.ts";
import { Shutdown } from "./actors/shutdown.ts";
import { formatError } from "./chains/shared/redact.ts";
import { configFromProcess } from "./config/env.ts";
import { healthcheck } from "./routes/health.ts";
import { Readiness } from "./actors/readiness.ts";
import { startSignerProcess } from "./actors/signer/process.ts";

// `issuance healthcheck [/readyz]`: the Dockerfile's HEALTHCHECK probes the running server with the binary itself. It
// awaits only in that mode (then exits), so a serving process reaches the cron registration below with no await.
if (Deno.args[0] === "healthcheck") Deno.exit(await healthcheck(Deno.args.slice(1), { PORT: Deno.env.get("PORT") }));

// ROLE=signer (docs/operations.md "Roles", the signer process): the key holder of a keyless worker, on its unix socket
// only; no HTTP, no cron, no pipeline. It awaits only in that mode (until a signal), so every other role goes on below.
if (Deno.env.get("ROLE") === "signer") Deno.exit(await runSigner());

async function runSigner(): Promise<number> {
  let signer;
  try {
    signer = await startSignerProcess(configFromProcess());
  } catch (err) {
    console.error(`refusing to start: ${formatError(err)}`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, () => resolve());
  });
  await signer.close();
  return 0;
}

// Listening from the start: a signal while starting is acted on once the service is up.
const shutdown = new Shutdown().listen();
const readiness = new Readiness();

async function start() {
  const config = configFromProcess();
  const services = await buildServices(config);
  const pipeline = pipelineRuntime(services);
  // Deno Deploy: no timer outlives a request, and KV has no queue; cron alone drives the pipeline. Armed here, before
  // any cron run can see the runtime.
  if (config.runtimeMode === "deploy") pipeline?.startCronOnly();
  return { config, services, pipeline };
}

const ready = start().catch((err) => {
  // A refused start names its reason, redacted: RPC failures quote URLs that carry API keys.
  console.error(`refusing to start: ${formatError(err)}`);
  Deno.exit(1);
});
// Deno.cron must be called at the module top level, before Deno.serve and before any top-level await (Deno Deploy
// discovers the jobs as the module loads and refuses later calls): the jobs are registered now, and each run waits for
// the services. Locally Deno.cron needs --unstable-cron (deno task dev/start pass it); Deploy has it without flags.
if (typeof Deno.cron === "function") {
  registerCronJobs(
    (name, schedule, handler) => Deno.cron(name, schedule, handler),
    cronJobs(ready.then((r) => r.pipeline)),
  );
} else {
  console.warn("Deno.cron is not available (run with --unstable-cron): the pipeline runs on its loops alone");
}
const { config, services, pipeline } = await ready;
const app = createApp(services, readiness);
if (config.runtimeMode === "process") pipeline?.start();
if (!pipeline && config.role === "api") {
  console.log("ROLE=api: serving the partner and admin API; a ROLE=worker process on this KV runs the pipeline");
} else if (!pipeline) console.warn("PIPELINE=off: serving the API without watchers or order actors");
if (config.role === "worker") console.log("ROLE=worker: running the pipeline; serving health and metrics only");
const server = Deno.serve({
  port: config.port,
  onListen: ({ hostname, port }) =>
    console.log(
      `listening on http://${hostname}:${port} (chain mode ${config.chainMode}, runtime ${config.runtimeMode}, ` +
        `KV ${config.kvPath || "the platform's"})`,
    ),
}, app.fetch);
readiness.markReady();
shutdown.attach({ readiness, server, runtime: pipeline, kv: services.kv });
