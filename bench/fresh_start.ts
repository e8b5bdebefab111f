/**
 * A fresh clone's first start (docs/runtime.md): the committed HEAD cloned into a temporary folder, an empty DENO_DIR,
 * then the service started and GET /healthz polled until it answers 200. Printed per way of starting it: the seconds
 * until ready, what was downloaded (the npm cache in DENO_DIR, unpacked) and what was installed (node_modules
 * folders), with the package count.
 *
 * - `dev`: `deno task dev`, exactly as a developer types it on a fresh clone (runtime/deno.json's set only);
 * - `full`: `deno task start`'s `deno run` flags with the repository's deno.json and `--node-modules-dir=auto` (test
 *   and build tools included): how `deno task dev` and `start` started before runtime/deno.json.
 *
 * Both download from the npm registry: the figures include the network. With `compile` in BENCH_FRESH_MODES, the
 * Dockerfile's service compile also runs in the clone, with a stand-in for Deno's runtime (denort comes from
 * dl.deno.land only), and its "Files:" line is printed: what the binary embeds besides that runtime.
 * Run: deno task bench:fresh-start   (BENCH_FRESH_MODES=dev,full,compile)
 */
const REPO = new URL("../", import.meta.url).pathname;
const MODES = (Deno.env.get("BENCH_FRESH_MODES") ?? "dev,full,compile").split(",").map((m) => m.trim());

async function run(cmd: string, args: string[], opts: Deno.CommandOptions = {}): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped", ...opts }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")}: ${text}`);
  return text;
}

/** Bytes of the files under a folder, each inode once (Deno links its npm cache into node_modules). */
async function size(path: string, seen = new Set<string>()): Promise<number> {
  let total = 0;
  let entries: AsyncIterable<Deno.DirEntry>;
  try {
    entries = Deno.readDir(path);
    for await (const e of entries) {
      const p = `${path}/${e.name}`;
      if (e.isSymlink) continue;
      if (e.isDirectory) total += await size(p, seen);
      else {
        const s = await Deno.lstat(p);
        const id = `${s.dev}:${s.ino}`;
        if (!seen.has(id)) (seen.add(id), total += s.size);
      }
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return total;
}

async function packages(nodeModules: string): Promise<number> {
  let n = 0;
  try {
    for await (const e of Deno.readDir(`${nodeModules}/.deno`)) if (e.isDirectory && e.name.includes("@")) n++;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return n;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

async function freshStart(mode: string): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: `fresh-start-${mode}-` });
  try {
    await run("git", ["clone", "-q", REPO, `${dir}/repo`]);
    const repo = `${dir}/repo`;
    const denoDir = `${dir}/deno_dir`;
    const env = { DENO_DIR: denoDir, NO_COLOR: "1", KV_PATH: `${dir}/kv/kv.sqlite3` };
    const { tasks } = JSON.parse(await Deno.readTextFile(`${repo}/deno.json`));
    if (mode === "compile") {
      await compile(repo, env, dir);
      return;
    }
    const words: string[] = tasks.start.split(/\s+/).slice(1);
    // setsid: `deno task` runs the command as its child (with --watch, a grandchild); the group is stopped at the end.
    const args = mode === "full"
      ? [
        Deno.execPath(),
        words[0],
        "--node-modules-dir=auto",
        ...words.slice(1).filter((w) => !w.startsWith("--config=")),
      ]
      : [Deno.execPath(), "task", "dev"];
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    const log = await Deno.open(`${dir}/service.log`, { write: true, create: true });
    const started = performance.now();
    const child = new Deno.Command("setsid", {
      args,
      cwd: repo,
      env: { ...env, PORT: String(port) },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const logged = child.stderr.pipeTo(log.writable);
    let status = 0;
    while (status !== 200) {
      await new Promise((r) => setTimeout(r, 50));
      status = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => (r.body?.cancel(), r.status), () => 0);
      const exited = await Promise.race([child.status, Promise.resolve(null)]);
      if (exited) {
        await logged;
        throw new Error(
          `${mode}: the service exited (${exited.code}):\n${await Deno.readTextFile(`${dir}/service.log`)}`,
        );
      }
    }
    const ready = (performance.now() - started) / 1000;
    // SIGKILL: under --watch a service that exits on SIGTERM leaves its watcher waiting for a file change.
    Deno.kill(-child.pid, "SIGKILL");
    await child.status;
    await logged;
    const nodeModules = mode === "full" ? `${repo}/node_modules` : `${repo}/runtime/node_modules`;
    console.log(
      `${mode.padEnd(8)} ready after ${ready.toFixed(1)} s; downloaded (npm cache, unpacked) ` +
        `${mb(await size(`${denoDir}/npm`))}; node_modules ${mb(await size(nodeModules))}, ` +
        `${await packages(nodeModules)} packages` +
        (mode === "full" ? "" : `; the repository's node_modules ${mb(await size(`${repo}/node_modules`))}`),
    );
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The Dockerfile's install and service compile in the clone, with a stand-in runtime; prints the embedded size. */
async function compile(repo: string, env: Record<string, string>, dir: string): Promise<void> {
  const dockerfile = await Deno.readTextFile(`${repo}/Dockerfile`);
  const commands = dockerfile.replace(/\\\n/g, " ").split(/&&|\n/).map((c) => c.trim().replace(/^RUN /, ""))
    .filter((c) => /^deno (install|compile) /.test(c));
  const standIn = `${dir}/denort-stand-in`;
  await Deno.copyFile("/bin/true", standIn);
  for (const command of commands) {
    const words = command.split(/\s+/).slice(1);
    const o = words.indexOf("-o");
    if (o >= 0) words[o + 1] = `${dir}/${words[o + 1].split("/").pop()}`;
    const out = await run(Deno.execPath(), words, { cwd: repo, env: { ...env, DENORT_BIN: standIn } });
    if (o < 0) continue;
    const files = out.match(/Files: (\S+)/)?.[1];
    const bytes = (await Deno.stat(words[o + 1])).size - (await Deno.stat(standIn)).size;
    console.log(
      `compile  ${words[words.length - 1]}: embedded files ${files} (deno compile's report); ${mb(bytes)} ` +
        "appended to Deno's runtime",
    );
  }
}

for (const mode of MODES) await freshStart(mode);
