/**
 * The `deno compile` binary, checked as far as this machine allows (compiling needs to download Deno's runtime):
 *
 * - every module main.ts runs is in its static module graph (`deno info --json main.ts`), so `deno compile` embeds it,
 *   and no module of that graph touches the file system except where an operator points it (KV_PATH's folder and the
 *   configured secret files): each such call is listed below with its reason, and any other one fails this test
 *   loudly, naming the file and line (a page that serves a file from disk, say, must import it instead);
 * - the service, run with `--allow-read` and `--allow-write` narrowed to exactly those paths, starts, completes a mint
 *   and a burn, serves its read-only pages, and shuts down cleanly: at run time it reads nothing else;
 * - the Dockerfile compiles the entry point `deno task start` runs, with the same permission and unstable flags (and
 *   the admin CLI with `deno task admin`'s), runs as a non-root user with the KV in its volume, and has a HEALTHCHECK;
 *   its `deno compile` commands run (with a stand-in for Deno's runtime, which only dl.deno.land serves) and embed
 *   exactly runtime/deno.lock's packages: no test or build tool (docs/runtime.md).
 */
import assert from "node:assert/strict";
import { generateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { NATIVE } from "../chains/catalog.ts";
import { newPrivateKeyPem } from "../config/secrets.ts";
import { createApiKey } from "../kv/api_keys.ts";
import { openKv } from "../kv/open.ts";
import { SIM_DESTINATION } from "./support/burns.ts";
import { ChildServer } from "./support/child_server.ts";
import { type Json, terminal } from "./support/pipeline.ts";
import { packageId, packageName, runtimeLockPackages, TOOLS } from "./support/runtime_set.ts";

const ROOT = new URL("../", import.meta.url).pathname;

// ---- the module graph and its file-system calls ----

/** Calls that reach the file system, a subprocess or a path relative to the code (which a binary does not have). */
const FS_CALLS: [name: string, pattern: RegExp][] = [
  [
    "Deno file API",
    /\bDeno\.(readFile|readTextFile|open|create|readDir|stat|lstat|realPath|readLink|writeFile|writeTextFile|mkdir|remove|rename|link|symlink|copyFile|makeTempDir|makeTempFile|chmod|chown|truncate|utime|watchFs)(Sync)?\b/g,
  ],
  ["Deno.openKv", /\bDeno\.openKv\b/g],
  ["subprocess", /\bDeno\.(Command|run)\b/g],
  ["Deno.cwd", /\bDeno\.cwd\b/g],
  ["path of the code", /\bimport\.meta\.(dirname|filename|url)\b/g],
  ["file: URL", /["'`]file:\/\//g],
  ["node file system", /["'](node:)?(fs|fs\/promises|child_process)["']/g],
  ["require", /\b(require\s*\(\s*["'`]|createRequire\b)/g],
  ["dynamic import", /\bimport\s*\(/g],
];

/**
 * Every file-system call of main.ts's graph, by file and kind, with where its path comes from. A call is fine when
 * its path is one the operator configures (the KV folder, a secret file): the binary is run with access to exactly
 * those. Anything else must be embedded by importing it.
 */
const ALLOWED: Record<string, { kinds: string[]; why: string }> = {
  "config/secrets.ts": {
    kinds: ["Deno file API"],
    why: "reads JWT_PRIVATE_KEY_FILE / MASTER_MNEMONIC_FILE (and EVM key files via config/evm.ts), or in sim mode " +
      "generates them once into KV_PATH's folder",
  },
  "config/secret_file.ts": {
    kinds: ["Deno file API"],
    why: "reads a configured secret file (the *_FILE settings) and checks who may read it",
  },
  "kv/open.ts": { kinds: ["Deno file API", "Deno.openKv"], why: "creates KV_PATH's folder and opens KV_PATH" },
  "actors/signer/service.ts": {
    kinds: ["Deno file API"],
    why: "the signer process's unix socket at SIGNER_SOCKET: sets its mode, removes a stale one, removes it on close",
  },
};

interface ModuleInfo {
  kind: string;
  specifier: string;
}

async function moduleGraph(entry: string): Promise<ModuleInfo[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    // The runtime config: what the binary is compiled from (docs/runtime.md), its packages as npm modules.
    args: ["info", "--json", "--config=runtime/deno.json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`deno info failed: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(new TextDecoder().decode(out.stdout)).modules;
}

/** Strips comments (a doc comment may name an API) but keeps line numbers. */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, " "))
    .replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

Deno.test("main.ts's module graph: local, npm and node builtins only; file access only to configured paths", async () => {
  const modules = await moduleGraph("main.ts");
  const kinds = new Set(modules.map((m) => m.kind));
  // esm: local files (embedded); npm: packages (embedded); node: builtins of the runtime. No remote or wasm/json read
  // at run time.
  for (const kind of kinds) assert.ok(["esm", "npm", "node"].includes(kind), `module kind ${kind} in the graph`);
  const local = modules.filter((m) => m.kind === "esm").map((m) => m.specifier);
  for (const s of local) assert.ok(s.startsWith(`file://${ROOT}`), `${s}: outside the repository`);
  const files = local.map((s) => s.slice(`file://${ROOT}`.length)).sort();
  assert.ok(files.includes("main.ts") && files.includes("app.ts") && files.length > 50, files.join(", "));
  const builtins = modules.filter((m) => m.kind === "node").map((m) => m.specifier);
  for (const b of builtins) assert.ok(!/^node:(fs|child_process)/.test(b), `${b} imported by main.ts's graph`);

  const unexpected: string[] = [];
  const seen = new Map<string, Set<string>>();
  for (const file of files) {
    const lines = code(await Deno.readTextFile(`${ROOT}${file}`)).split("\n");
    lines.forEach((line, i) => {
      for (const [kind, pattern] of FS_CALLS) {
        if (!line.match(pattern)) continue;
        if (ALLOWED[file]?.kinds.includes(kind)) {
          seen.set(file, (seen.get(file) ?? new Set()).add(kind));
        } else unexpected.push(`${file}:${i + 1} (${kind}): ${line.trim()}`);
      }
    });
  }
  assert.deepEqual(
    unexpected,
    [],
    "main.ts's graph touches the file system outside KV_PATH and the configured secret files. A compiled binary " +
      "embeds only imported modules: import the content (a JSON or text import, or a generated .ts module) instead " +
      "of reading it, or, for an operator-configured path, add it to ALLOWED in tests/binary_embedding_test.ts and " +
      'to the --allow-read list of the run below and of docs/operations.md "Run the binary":\n  ' +
      unexpected.join("\n  "),
  );
  // The list stays exact: an allowance nothing uses any more is removed.
  for (const [file, { kinds }] of Object.entries(ALLOWED)) {
    for (const kind of kinds) assert.ok(seen.get(file)?.has(kind), `ALLOWED lists ${kind} in ${file}, unused`);
  }
});

// ---- the service under narrowed permissions ----

async function privateFile(path: string, text: string) {
  await Deno.writeTextFile(path, text, { mode: 0o600 });
  await Deno.chmod(path, 0o600);
}

async function until<T>(what: string, probe: () => Promise<T | null>, server: ChildServer): Promise<T> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not after 20 s; server log: ${await server.errTail()}`);
}

/** `deno run`'s flags for the service: everything it needs, and reads and writes of these paths only. */
function narrowFlags(kvDir: string, secretFiles: string[]): string[] {
  return [
    "--no-prompt",
    "--allow-net",
    "--allow-env",
    `--allow-read=${[kvDir, ...secretFiles].join(",")}`,
    `--allow-write=${kvDir}`,
    "--unstable-kv",
    "--unstable-cron",
  ];
}

const DENIED = /Requires (read|write|run|ffi|sys) access|NotCapable|PermissionDenied/;

Deno.test("the service reads and writes only KV_PATH's folder and its secret files at run time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "issuance-binary-" });
  const kvDir = `${dir}/kv`;
  const kvPath = `${kvDir}/kv.sqlite3`;
  const jwtFile = `${dir}/secrets/jwt.pem`;
  const mnemonicFile = `${dir}/secrets/mnemonic.txt`;
  await Deno.mkdir(`${dir}/secrets`);
  await privateFile(jwtFile, await newPrivateKeyPem());
  await privateFile(mnemonicFile, generateMnemonic(wordlist, 256) + "\n");
  const kv = await openKv(kvPath);
  const apiKey = (await createApiKey(kv, "binary-partner")).apiKey;
  kv.close();
  const env = {
    KV_PATH: kvPath,
    JWT_PRIVATE_KEY_FILE: jwtFile,
    MASTER_MNEMONIC_FILE: mnemonicFile,
    CHAIN_MODE: "sim",
    PIPELINE: "on",
    BASE_URL: "http://binary.test",
    SIM_BLOCK_MS: "50",
    SWEEP_MS: "50",
  };
  let server: ChildServer | null = null;
  try {
    await refusesWithoutItsSecret(dir, env, kvDir, mnemonicFile);

    server = await ChildServer.start(dir, env, narrowFlags(kvDir, [jwtFile, mnemonicFile]));
    const s = server;
    assert.equal((await s.call("GET", "/readyz")).status, 200);
    const wallet = "0x" + "5a".repeat(20);
    const token = await s.token(apiKey, wallet);

    // A mint: a deposit on sim sol, minted on base.
    const mintWallet = await s.call("POST", "/mint/wallets", {
      token,
      body: { chain: "sol", destinationChain: "base" },
    });
    assert.equal(mintWallet.status, 201, JSON.stringify(mintWallet.body));
    const deposit = 2n * NATIVE.sol.minimumDeposit;
    const sent = await s.call("POST", "/sim/deposits", {
      body: { chain: "sol", address: mintWallet.body.data.address, amount: deposit.toString() },
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));

    // A burn: uSOL from the faucet sent to the transfer address on base, paid out on sim sol.
    const config = await s.call("POST", "/burn/wallets", {
      token,
      body: { destinationChain: "sol", destinationAddress: SIM_DESTINATION.sol, memo: "" },
    });
    assert.equal(config.status, 201, JSON.stringify(config.body));
    const burn = 2n * NATIVE.sol.uAsset.minimumBurnAmount;
    const faucet = await s.call("POST", "/sim/faucet", {
      body: { chain: "base", address: wallet, token: "uSOL", amount: burn.toString() },
    });
    assert.equal(faucet.status, 201, JSON.stringify(faucet.body));
    const transfer = await s.call("POST", "/sim/transfers", {
      body: { chain: "base", from: wallet, token: "uSOL", amount: burn.toString() },
    });
    assert.equal(transfer.status, 201, JSON.stringify(transfer.body));

    const orders: Json[] = await until("a completed mint and burn", async () => {
      const list = await s.orders(token);
      return list.length === 2 && list.every(terminal) ? list : null;
    }, s);
    assert.deepEqual(orders.map((o) => [o.type, o.status, o.amount]).sort(), [
      ["burn", "completed", burn.toString()],
      ["mint", "completed", deposit.toString()],
    ]);

    // The read-only pages, including those other work adds (/openapi.json, /docs): a page reading a file from disk
    // would answer 500 here. 404: not built (yet).
    for (
      const path of [
        "/healthz",
        "/readyz",
        "/config/mint",
        "/config/burn",
        "/auth/.well-known/jwks.json",
        "/openapi.json",
        "/docs",
      ]
    ) {
      const res = await s.call("GET", path);
      assert.ok([200, 404].includes(res.status), `GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    }

    // The Dockerfile's HEALTHCHECK: the same program with `healthcheck [path]`, on the same port, same permissions.
    const port = new URL(s.url).port;
    assert.equal(await healthcheck(["/readyz"], port, kvDir, [jwtFile, mnemonicFile]), 0);

    await s.stop();
    assert.equal(await healthcheck(["/healthz"], port, kvDir, [jwtFile, mnemonicFile]), 1);
    const status = await s.status;
    const log = await Deno.readTextFile(s.errLog);
    assert.equal(status.code, 0, log.slice(-2000));
    assert.ok(!DENIED.test(log), `a permission was refused at run time:\n${log.slice(-3000)}`);
    assert.match(log, /shutdown: clean after \d+ ms; exiting 0/);
    const stdout = await Deno.readTextFile(s.errLog.replace(/\.err\.log$/, ".out.log"));
    assert.ok(!DENIED.test(stdout), stdout.slice(-2000));
  } finally {
    await server?.stop().catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

async function healthcheck(args: string[], port: string, kvDir: string, secretFiles: string[]): Promise<number> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...narrowFlags(kvDir, secretFiles), "main.ts", "healthcheck", ...args],
    cwd: ROOT,
    env: { PORT: port },
    stdout: "null",
    stderr: "null",
  }).output();
  return out.code;
}

/** The narrowing is real: without read access to its mnemonic file the service refuses to start, naming it. */
async function refusesWithoutItsSecret(
  dir: string,
  env: Record<string, string>,
  kvDir: string,
  mnemonicFile: string,
) {
  const refused = await ChildServer.start(dir, env, narrowFlags(kvDir, [env.JWT_PRIVATE_KEY_FILE])).then(
    async (s) => {
      await s.stop();
      return null;
    },
    (err: Error) => err.message,
  );
  assert.ok(refused !== null, "started without read access to its mnemonic file");
  assert.match(refused, new RegExp(`MASTER_MNEMONIC_FILE names ${mnemonicFile}, which cannot be read`));
}

// ---- the Dockerfile and deno.json ----

interface Compile {
  flags: string[];
  output: string;
  entry: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(dockerfile: string): string[] {
  return dockerfile.replace(/\\\n/g, " ").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
}

function compiles(dockerfile: string): Compile[] {
  const out: Compile[] = [];
  for (const line of instructions(dockerfile).filter((l) => l.startsWith("RUN "))) {
    for (const command of line.split("&&")) {
      const words = command.trim().split(/\s+/);
      const at = words.indexOf("compile");
      if (words[at - 1] !== "deno" || at < 0) continue;
      const args = words.slice(at + 1);
      const o = args.indexOf("-o");
      out.push({
        output: args[o + 1],
        entry: args[args.length - 1],
        flags: args.filter((a, i) => a.startsWith("--") && i !== o + 1),
      });
    }
  }
  return out;
}

/** The flags that decide what a program may do and how it holds memory: permissions, unstable features, V8 flags. */
const powers = (flags: string[]) => flags.filter((f) => /^--(allow-|deny-|unstable-|v8-flags=)|^-A$/.test(f)).sort();

function task(tasks: Record<string, string>, name: string): { flags: string[]; entry: string } {
  const words = tasks[name].split(/\s+/);
  assert.deepEqual(words.slice(0, 2), ["deno", "run"], `task ${name}: ${tasks[name]}`);
  return { flags: words.filter((w) => w.startsWith("-")), entry: words[words.length - 1] };
}

Deno.test("the Dockerfile compiles deno task start's entry point with its flags, non-root, KV in the volume, healthcheck", async () => {
  const dockerfile = await Deno.readTextFile(`${ROOT}Dockerfile`);
  const { tasks } = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const built = compiles(dockerfile);
  const lines = instructions(dockerfile);

  const start = task(tasks, "start");
  assert.equal(start.entry, "main.ts");
  const service = built.find((c) => c.entry === start.entry);
  assert.ok(service, `no deno compile of ${start.entry} in the Dockerfile`);
  assert.deepEqual(powers(service.flags), powers(start.flags), "the binary's flags differ from deno task start's");
  assert.deepEqual(powers(task(tasks, "dev").flags), powers(start.flags), "deno task dev differs from start");
  const admin = task(tasks, "admin");
  const adminBinary = built.find((c) => c.entry === admin.entry);
  assert.ok(adminBinary, `no deno compile of ${admin.entry}`);
  assert.deepEqual(powers(adminBinary.flags), powers(admin.flags), "the admin binary's flags differ from the task's");
  for (const c of built) assert.ok(c.flags.includes("--frozen"), `${c.entry}: builds from the committed lock file`);

  // The final stage runs the service binary as its entry point.
  const finalStage = lines.slice(lines.findLastIndex((l) => l.startsWith("FROM ")));
  const entrypoint = JSON.parse(finalStage.find((l) => l.startsWith("ENTRYPOINT "))!.slice("ENTRYPOINT ".length));
  const serviceName = service.output.split("/").pop()!;
  assert.equal(entrypoint.length, 1);
  assert.equal(entrypoint[0].split("/").pop(), serviceName);
  const copied = finalStage.find((l) =>
    l.startsWith("COPY --from=build") && l.includes(service.output.replace(/[^/]+$/, ""))
  );
  assert.ok(copied, `the final stage copies ${service.output}`);
  assert.ok(copied.endsWith(entrypoint[0].replace(/[^/]+$/, "")), copied);

  // Non-root, KV_PATH inside the volume, a healthcheck with the binary itself (distroless has no curl).
  const user = finalStage.find((l) => l.startsWith("USER "));
  assert.ok(user && !/^USER (root|0)(:|$)/.test(user), `final stage user: ${user}`);
  const envLine = finalStage.find((l) => l.startsWith("ENV ") && l.includes("KV_PATH="))!;
  const kvPath = envLine.match(/KV_PATH=(\S+)/)![1];
  const volume = finalStage.find((l) => l.startsWith("VOLUME "))!.slice("VOLUME ".length).trim();
  assert.ok(kvPath.startsWith(`${volume}/`), `KV_PATH ${kvPath} is not in the volume ${volume}`);
  assert.ok(finalStage.some((l) => l.startsWith("COPY") && l.includes("--chown=65532") && l.endsWith(` ${volume}`)));
  const health = finalStage.find((l) => l.startsWith("HEALTHCHECK "))!;
  assert.match(health, new RegExp(`CMD \\["${entrypoint[0]}", "healthcheck"`));
});

/**
 * The packages (name@version) a `deno compile` run embedded, read from the "Embedded Files" tree it prints: the
 * folders directly under node_modules/.deno ("@scope+name@1.2.3/* (size)", or "name@1.2.3 (size)" when expanded).
 */
function embeddedPackages(report: string): Set<string> {
  const lines = report.split("\n");
  const at = lines.findIndex((l) => /[├└]─┬ \.deno \(/.test(l));
  assert.ok(at >= 0, `no node_modules/.deno in the embedded files:\n${report}`);
  const depth = lines[at].search(/[├└]/) + 2;
  const out = new Set<string>();
  for (const line of lines.slice(at + 1)) {
    if (line.search(/[├└]/) < depth) {
      if (line.trim() && !line.slice(0, depth).includes("│")) break; // left the .deno folder
      continue;
    }
    if (line.search(/[├└]/) !== depth) continue;
    const m = line.match(/^[\s│]*[├└]─[─┬] (\S+?)(?:\/\*)? \(/);
    if (!m || !/.@\d/.test(m[1])) continue; // Deno's own files: .deno.lock, .setup-cache.bin, node_modules
    out.add(packageId(m[1].startsWith("@") ? m[1].replace("+", "/") : m[1]));
  }
  return out;
}

Deno.test("the Dockerfile's deno compile commands embed the runtime install set and no tool", async () => {
  const dir = await Deno.makeTempDir({ prefix: "issuance-compile-" });
  try {
    const runtime = await runtimeLockPackages();
    // Deno's runtime (denort) comes from dl.deno.land, which CI machines may not reach; a stand-in executable takes
    // its place: `deno compile` appends the same embedded files to it and reports them, and the result is not run.
    const standIn = `${dir}/denort-stand-in`;
    await Deno.copyFile("/bin/true", standIn);
    for (const c of compiles(await Deno.readTextFile(`${ROOT}Dockerfile`))) {
      const output = `${dir}/${c.output.split("/").pop()}`;
      // --no-check: `deno check` covers types.
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["compile", "--no-check", ...c.flags, "-o", output, c.entry],
        cwd: ROOT,
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1", DENORT_BIN: standIn },
      }).output();
      const report = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.ok(out.success, `deno compile ${c.entry}:\n${report.slice(-3000)}`);
      assert.ok((await Deno.stat(output)).size > 50_000_000, `${output}: written, with its node_modules`);
      const embedded = embeddedPackages(report);
      const tools = [...embedded].filter((p) => TOOLS.includes(packageName(p)) && !runtime.has(p));
      assert.deepEqual(
        tools,
        [],
        `deno compile ${c.entry} embeds test or build tools (Deno never prunes node_modules: in a checkout where ` +
          "runtime/deno.json once held one, remove runtime/node_modules and run again)",
      );
      assert.deepEqual([...embedded].sort(), [...runtime].sort(), `deno compile ${c.entry}: embedded packages`);
      await Deno.remove(output);
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
