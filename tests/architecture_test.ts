// The layers of the service, held by the real module graph.
//
// Imports run one way, from the top of this list to the bottom (docs/architecture.md "Layout" says the same in prose):
//
//   entry    main.ts, bench/, tests/        start the service, measure it or test it; nothing of the service imports them
//   app      app.ts                         builds the services from a configuration and mounts the routers
//   edge     routes/, cli/                  HTTP and the command line, both over the use cases below
//   actors   actors/ (and actors/ops/)      the state machine's runtime, watchers, senders and the operator operations
//   config   config/                        the environment, secrets, chain modes, and the adapters built from them
//                                           (config/registry.ts: it raises KV alerts, so it sits above kv/)
//   kv       kv/                            the only code that knows key layout: keys, writes and reads, no use case
//   model    model/                         what the stores and the state machine share (the Order, the sent-transaction records)
//   chains   chains/                        one adapter per chain family; no KV, no configuration
//   base     chains/catalog.ts, messages.ts, contracts/
//                                           the catalog, every message a partner sees, the uAsset contract artifact
//
// A module may import its own layer or any layer below it, never one above, and no module may take part in an import
// cycle. The graph is what `deno info --json` resolves from every entry point: main.ts, app.ts and each `.ts` file a
// deno.json task runs, so a new task is covered without editing this file.
import assert from "node:assert/strict";
import { z } from "zod";

const LAYERS: ReadonlyArray<{ name: string; holds: readonly string[] }> = [
  { name: "entry", holds: ["main.ts", "bench/", "tests/"] },
  { name: "app", holds: ["app.ts"] },
  { name: "edge", holds: ["routes/", "cli/"] },
  { name: "actors", holds: ["actors/"] },
  { name: "config", holds: ["config/"] },
  { name: "kv", holds: ["kv/"] },
  { name: "model", holds: ["model/"] },
  { name: "chains", holds: ["chains/"] },
  { name: "base", holds: ["chains/catalog.ts", "messages.ts", "contracts/"] },
];

const root = new URL("../", import.meta.url);

function layerOf(path: string): number {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((layer, index) => {
    for (const prefix of layer.holds) {
      const matches = prefix.endsWith("/") ? path.startsWith(prefix) : path === prefix;
      if (matches && prefix.length > bestLength) {
        best = index;
        bestLength = prefix.length;
      }
    }
  });
  return best;
}

const denoJson = z.object({ tasks: z.record(z.string(), z.string()) });
const infoJson = z.object({
  modules: z.array(z.object({
    specifier: z.string(),
    dependencies: z.array(z.object({
      code: z.object({ specifier: z.string() }).optional(),
      type: z.object({ specifier: z.string() }).optional(),
    })).optional(),
  })),
});

async function entryPoints(): Promise<string[]> {
  const { tasks } = denoJson.parse(JSON.parse(await Deno.readTextFile(new URL("deno.json", root))));
  const fromTasks = Object.values(tasks).flatMap((command) =>
    command.split(/\s+/).filter((word) => word.endsWith(".ts") && !word.startsWith("-"))
  );
  return [...new Set(["main.ts", "app.ts", "cli/admin.ts", ...fromTasks])].sort();
}

async function moduleGraph(entries: string[]): Promise<Map<string, Set<string>>> {
  const prefix = root.href;
  const packages = new URL("node_modules/", root).href;
  const graph = new Map<string, Set<string>>();
  const edgesOf = (from: string) => graph.get(from) ?? graph.set(from, new Set()).get(from)!;
  for (const entry of entries) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      cwd: root,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(output.success, `deno info ${entry} failed: ${new TextDecoder().decode(output.stderr)}`);
    const info = infoJson.parse(JSON.parse(new TextDecoder().decode(output.stdout)));
    for (const module of info.modules) {
      // npm packages resolve into node_modules/ inside the repository (nodeModulesDir "manual"): not our modules.
      if (!module.specifier.startsWith(prefix) || module.specifier.startsWith(packages)) continue;
      const from = module.specifier.slice(prefix.length);
      const out = edgesOf(from);
      for (const dependency of module.dependencies ?? []) {
        for (const target of [dependency.code?.specifier, dependency.type?.specifier]) {
          if (target?.startsWith(prefix) && !target.startsWith(packages) && !target.endsWith(".json")) {
            out.add(target.slice(prefix.length));
            edgesOf(target.slice(prefix.length));
          }
        }
      }
    }
  }
  return graph;
}

// Tarjan's strongly connected components; each component of more than one module (or a module importing itself) is
// reported as one shortest cycle through its first module, written a -> b -> a.
function cycles(graph: Map<string, Set<string>>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of [...graph.get(v)!].sort()) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)!.has(v)) components.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((component) => {
    const inside = new Set(component);
    const start = component[0];
    const cameFrom = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const v = queue.shift()!;
      for (const w of [...graph.get(v)!].sort()) {
        if (!inside.has(w) || cameFrom.has(w)) continue;
        cameFrom.set(w, v);
        if (w === start) queue.length = 0;
        else queue.push(w);
        if (w === start) break;
      }
    }
    const path = [start];
    for (let v = cameFrom.get(start)!; v !== start; v = cameFrom.get(v)!) path.unshift(v);
    path.unshift(start);
    return `${path.join(" -> ")}${
      component.length > 2 ? ` (a knot of ${component.length}: ${component.join(", ")})` : ""
    }`;
  }).sort();
}

Deno.test("architecture: the module graph has no import cycle and no import from a lower layer to a higher one", async (t) => {
  const entries = await entryPoints();
  const graph = await moduleGraph(entries);

  await t.step("the graph is the service's own (entry points from deno.json tasks resolve)", () => {
    for (const entry of ["main.ts", "app.ts", "cli/admin.ts", "cli/sim.ts", "routes/orders.ts", "kv/orders.ts"]) {
      assert.ok(graph.has(entry), `${entry} missing from the module graph of ${entries.join(", ")}`);
    }
  });

  await t.step("every module sits in a layer", () => {
    const unplaced = [...graph.keys()].filter((path) => layerOf(path) < 0).sort();
    assert.deepEqual(unplaced, [], 'place these in LAYERS (and in docs/architecture.md "Layout")');
  });

  await t.step("no import cycle", () => {
    assert.deepEqual(cycles(graph), []);
  });

  await t.step("no import from a lower layer to a higher one", () => {
    const upward: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        if (layerOf(to) < layerOf(from)) {
          upward.push(`${from} (${LAYERS[layerOf(from)].name}) -> ${to} (${LAYERS[layerOf(to)].name})`);
        }
      }
    }
    assert.deepEqual(upward.sort(), []);
  });
});

Deno.test("architecture: the checker itself finds a cycle and an upward import", () => {
  const graph = new Map([
    ["kv/a.ts", new Set(["kv/b.ts"])],
    ["kv/b.ts", new Set(["kv/c.ts", "actors/x.ts"])],
    ["kv/c.ts", new Set(["kv/a.ts"])],
    ["actors/x.ts", new Set<string>()],
  ]);
  assert.deepEqual(cycles(graph), [
    "kv/a.ts -> kv/b.ts -> kv/c.ts -> kv/a.ts (a knot of 3: kv/a.ts, kv/b.ts, kv/c.ts)",
  ]);
  assert.ok(layerOf("actors/x.ts") < layerOf("kv/b.ts"));
  assert.equal(LAYERS[layerOf("chains/catalog.ts")].name, "base");
  assert.equal(LAYERS[layerOf("chains/sol/rpc.ts")].name, "chains");
  assert.equal(layerOf("nowhere.ts"), -1);
});
