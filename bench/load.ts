/**
 * A closed-loop HTTP load generator run as its own process, so it does not share an event loop with the server it
 * measures. Usage: deno run --allow-net bench/load.ts '<json spec>'; prints one JSON line of results.
 */
interface Spec {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  concurrency: number;
  seconds: number;
}

const spec: Spec = JSON.parse(Deno.args[0]);
const latencies: number[] = [];
let errors = 0;
const deadline = performance.now() + spec.seconds * 1000;

async function worker() {
  while (performance.now() < deadline) {
    const start = performance.now();
    const res = await fetch(spec.url, { method: spec.method, headers: spec.headers, body: spec.body });
    await res.arrayBuffer();
    if (!res.ok) errors++;
    latencies.push(performance.now() - start);
  }
}

// Warm up connections and JIT before measuring.
const warm = performance.now() + 500;
while (performance.now() < warm) {
  await (await fetch(spec.url, { method: spec.method, headers: spec.headers, body: spec.body })).arrayBuffer();
}

const began = performance.now();
await Promise.all(Array.from({ length: spec.concurrency }, worker));
const elapsed = (performance.now() - began) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
console.log(
  JSON.stringify({
    requests: latencies.length,
    errors,
    rps: latencies.length / elapsed,
    p50: pct(0.5),
    p99: pct(0.99),
  }),
);
