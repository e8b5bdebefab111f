/**
 * The runtime install set (docs/runtime.md): what `deno task dev`/`start`/`signer`/`admin` install into
 * runtime/node_modules on a fresh clone, and what the Dockerfile's binaries embed, is what the service and the operator
 * CLI import, and no test or build tool.
 *
 * - runtime/deno.json maps exactly the bare specifiers main.ts's and cli/admin.ts's graphs import (plus the one peer
 *   pin below), each to the same pinned package deno.json maps it to;
 * - runtime/deno.lock is deno.lock cut down to those packages, entry for entry, so the service runs the very
 *   resolution the tests run, and none of TOOLS is in it;
 * - installing for main.ts and cli/admin.ts from runtime/deno.json into an empty folder yields exactly that lock's
 *   packages.
 */
import assert from "node:assert/strict";
import {
  importedPackage,
  installedPackages,
  type Lock,
  packageId,
  packageName,
  readJson,
  RUNTIME_CONFIG,
  runtimeLockPackages,
  TOOLS,
} from "./support/runtime_set.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** The entry points the runtime tasks run; runtime/deno.json maps exactly what their graphs import. */
const RUNTIME_ENTRIES = ["main.ts", "cli/admin.ts", "cli/sim.ts"];
/** The tasks that run from runtime/deno.json: what an operator or a developer starting the service runs. */
const RUNTIME_TASKS = ["dev", "start", "signer", "admin", "sim"];

/**
 * Packages that are in the runtime set without being imported by name: `typescript` is a required peer of gql.tada, a
 * dependency of @mysten/sui; unpinned, Deno resolves that peer to the newest compiler (7.x: a native binary of ~28 MB
 * besides, and outside the ^5 || ^6 range @0no-co/graphqlsp asks for, with a warning at every start). Pinned here to deno.json's 5.9.3, the runtime lock stays a subset of
 * deno.lock.
 */
const PEER_PINS = ["typescript"];

/** Tool packages that must never be reached by any runtime package (beyond the TOOLS imports themselves). */
const NEVER_AT_RUN_TIME = [...TOOLS, "@typescript/native-preview", "@typescript/typescript-linux-x64"].filter((p) =>
  // graphql and yaml are imported by tools here, but also dependencies of @mysten/sui and @hono/zod-openapi.
  !["graphql", "yaml"].includes(p)
);

/**
 * A lock entry with its dependencies written out as name@version: a lock names a dependency by its name alone when it
 * holds one version of it, so the same entry reads "commander" in one lock and "commander@15.0.0" in the other.
 */
function lockEntry(lock: Lock, key: string): Record<string, unknown> {
  const entry = lock.npm[key] as { dependencies?: string[] };
  const ids = Object.keys(lock.npm).map(packageId);
  const full = (dep: string) => {
    if (dep.lastIndexOf("@") > 0) return dep;
    const found = ids.filter((id) => packageName(id) === dep);
    assert.equal(found.length, 1, `${key}: dependency ${dep} is ambiguous in the lock`);
    return found[0];
  };
  return { ...entry, dependencies: (entry.dependencies ?? []).map(full) };
}

async function bareSpecifiers(entry: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    // --frozen: a runtime/deno.lock that does not match runtime/deno.json fails here rather than being rewritten.
    args: ["info", "--json", "--frozen", `--config=${RUNTIME_CONFIG}`, entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, `deno info ${entry} with ${RUNTIME_CONFIG}: ${err}`);
  const { modules } = JSON.parse(new TextDecoder().decode(out.stdout));
  const specifiers = new Set<string>();
  for (const m of modules) {
    // An import runtime/deno.json does not map is an error in the graph: named here with its module.
    assert.equal(m.error, undefined, `${m.specifier}: ${m.error}`);
    if (m.kind !== "esm") continue;
    for (const d of m.dependencies ?? []) {
      const code = d.code;
      assert.equal(code?.error, undefined, `${m.specifier} imports ${d.specifier}: ${code?.error}`);
      if (!/^(\.|\/|node:|npm:|jsr:|https?:|data:)/.test(d.specifier)) specifiers.add(d.specifier);
    }
  }
  return [...specifiers];
}

/** The import map key a bare specifier resolves through: itself, or the longest "prefix/" key. */
function importKey(imports: Record<string, string>, specifier: string): string | undefined {
  if (specifier in imports) return specifier;
  return Object.keys(imports).filter((k) => k.endsWith("/") && specifier.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
}

Deno.test("runtime/deno.json maps exactly what main.ts, cli/admin.ts and cli/sim.ts import, pinned as deno.json pins it", async () => {
  const runtime: Record<string, string> = (await readJson(RUNTIME_CONFIG)).imports;
  const full: Record<string, string> = (await readJson("deno.json")).imports;
  const used = new Set<string>();
  for (const entry of RUNTIME_ENTRIES) {
    for (const s of await bareSpecifiers(entry)) {
      const key = importKey(runtime, s);
      assert.ok(key, `${entry}'s graph imports "${s}", which ${RUNTIME_CONFIG} does not map`);
      used.add(key);
    }
  }
  for (const p of PEER_PINS) used.add(p);
  assert.deepEqual(
    Object.keys(runtime).sort(),
    [...used].sort(),
    `${RUNTIME_CONFIG} maps something nothing at run time imports: every entry there is installed by deno task ` +
      "dev/start and embedded in the binary",
  );
  for (const [key, target] of Object.entries(runtime)) {
    assert.equal(target, full[key], `${RUNTIME_CONFIG} "${key}" differs from deno.json's: one version for both`);
  }
  // Every deno.json import is a runtime one or a declared tool, and no tool is a runtime import.
  const runtimePackages = new Set(Object.values(runtime).map(importedPackage));
  for (const [key, target] of Object.entries(full)) {
    const name = importedPackage(target);
    assert.ok(
      runtimePackages.has(name) || TOOLS.includes(name),
      `deno.json imports "${key}" (${name}): add it to ${RUNTIME_CONFIG} if the service imports it, or to TOOLS in ` +
        "tests/runtime_deps_test.ts if only tests, benches or build tasks do",
    );
  }
  for (const tool of TOOLS) assert.ok(!runtimePackages.has(tool), `${tool} is a tool and in ${RUNTIME_CONFIG}`);
});

Deno.test("runtime/deno.lock is deno.lock's resolution cut down to the runtime imports, with no tool in it", async () => {
  const runtime: Lock = await readJson("runtime/deno.lock");
  const full: Lock = await readJson("deno.lock");
  const imports: Record<string, string> = (await readJson(RUNTIME_CONFIG)).imports;
  for (const key of Object.keys(runtime.npm)) {
    assert.ok(key in full.npm, `runtime/deno.lock resolves ${key}, deno.lock does not`);
    assert.deepEqual(
      lockEntry(runtime, key),
      lockEntry(full, key),
      `runtime/deno.lock's ${key} differs from deno.lock's`,
    );
  }
  const wanted = [...new Set(Object.values(imports).map((t) => `npm:${t.replace(/^npm:\/?/, "").replace(/\/$/, "")}`))]
    .sort();
  assert.deepEqual(
    [...runtime.workspace.dependencies].sort(),
    wanted,
    "runtime/deno.lock is stale: see docs/runtime.md",
  );
  const names = new Set([...await runtimeLockPackages()].map(packageName));
  const entered = NEVER_AT_RUN_TIME.filter((t) => names.has(t));
  assert.deepEqual(entered, [], `test or build tools in the runtime install set: ${entered.join(", ")}`);
});

Deno.test("installing for main.ts and cli/admin.ts from runtime/deno.json yields exactly runtime/deno.lock's packages", async () => {
  const dir = await Deno.makeTempDir({ prefix: "issuance-runtime-install-" });
  try {
    await Deno.mkdir(`${dir}/runtime`);
    for (const f of ["deno.json", "deno.lock"]) await Deno.copyFile(`${ROOT}runtime/${f}`, `${dir}/runtime/${f}`);
    // The entry points stay in the repository; only the config, its lock and its node_modules are in the temporary
    // folder, so what lands in its node_modules is the install set of a fresh clone's runtime/.
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "install",
        "--frozen",
        `--config=${dir}/runtime/deno.json`,
        "--entrypoint",
        `${ROOT}main.ts`,
        `${ROOT}cli/admin.ts`,
      ],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const installed = await installedPackages(`${dir}/runtime/node_modules`);
    assert.deepEqual([...installed].sort(), [...await runtimeLockPackages()].sort());
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("deno task dev/start/signer/admin/sim and the Dockerfile's install and compiles use runtime/deno.json", async () => {
  const { tasks } = await readJson("deno.json");
  for (const name of RUNTIME_TASKS) {
    assert.ok(tasks[name].split(/\s+/).includes(`--config=${RUNTIME_CONFIG}`), `task ${name}: ${tasks[name]}`);
  }
  const dockerfile = (await Deno.readTextFile(`${ROOT}Dockerfile`)).replace(/\\\n/g, " ");
  const commands = dockerfile.split(/&&|\n/).map((c) => c.trim().replace(/^RUN /, "")).filter((c) =>
    /^deno (install|compile) /.test(c)
  );
  assert.equal(commands.length, 3, commands.join("\n"));
  for (const c of commands) assert.ok(c.split(/\s+/).includes(`--config=${RUNTIME_CONFIG}`), c);
});

/** The committed files as they are in this checkout, copied into `dir`: a fresh clone of the working tree. */
async function freshTree(dir: string): Promise<void> {
  const listed = await new Deno.Command("git", { args: ["ls-files", "-z"], cwd: ROOT, stdout: "piped" }).output();
  assert.ok(listed.success, "git ls-files");
  for (const path of new TextDecoder().decode(listed.stdout).split("\0").filter(Boolean)) {
    const to = `${dir}/${path}`;
    await Deno.mkdir(to.slice(0, to.lastIndexOf("/")), { recursive: true });
    await Deno.copyFile(`${ROOT}${path}`, to);
  }
}

Deno.test("deno task start on a fresh tree installs the runtime set alone: no node_modules of deno.json's, no tool", async () => {
  const dir = await Deno.makeTempDir({ prefix: "issuance-fresh-task-" });
  let child: Deno.ChildProcess | undefined;
  try {
    await freshTree(`${dir}/repo`);
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    // setsid: `deno task` runs the command as its child; the whole group is stopped at the end. The npm cache
    // (DENO_DIR) is this machine's, so nothing is downloaded: what is installed is the question, not how fast.
    child = new Deno.Command("setsid", {
      args: [Deno.execPath(), "task", "start"],
      cwd: `${dir}/repo`,
      env: { NO_COLOR: "1", PORT: String(port), KV_PATH: `${dir}/kv/kv.sqlite3` },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const log = new Response(child.stderr).text();
    const deadline = Date.now() + 120_000;
    let status = 0;
    while (status !== 200) {
      assert.ok(Date.now() < deadline, "deno task start not ready within 120 s");
      const exited: Deno.CommandStatus | null = await Promise.race([
        child.status,
        new Promise<null>((r) => setTimeout(() => r(null), 100)),
      ]);
      if (exited) assert.fail(`deno task start exited (${exited.code}):\n${await log}`);
      status = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => (r.body?.cancel(), r.status), () => 0);
    }
    const rootModules = await Deno.stat(`${dir}/repo/node_modules`).then(() => true, () => false);
    assert.equal(rootModules, false, "deno task installed deno.json's set (test and build tools) into node_modules/");
    const installed = await installedPackages(`${dir}/repo/runtime/node_modules`);
    const names = new Set([...installed].map(packageName));
    assert.deepEqual(NEVER_AT_RUN_TIME.filter((t) => names.has(t)), [], "tools installed by deno task start");
    assert.deepEqual([...installed].sort(), [...await runtimeLockPackages()].sort());
  } finally {
    if (child) {
      try {
        Deno.kill(-child.pid, "SIGTERM");
      } catch { /* already gone */ }
      await child.status;
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
