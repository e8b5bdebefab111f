/** The real server (`main.ts`) as a child process, for crash tests (SIGKILL at a fault point, restart). */
import { freePort } from "./anvil.ts";
import type { Json } from "./pipeline.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The real server (`main.ts`) as a child process on a KV file; logs go to files in `dir`. */
export class ChildServer {
  static #starts = 0;
  private constructor(
    readonly url: string,
    readonly status: Promise<Deno.CommandStatus>,
    private readonly child: Deno.ChildProcess,
    private readonly pipes: Promise<unknown>,
    readonly errLog: string,
  ) {}

  /**
   * `flags`: `deno run`'s flags (permissions, unstable features); all permissions unless given. `cleanEnv`: the child
   * gets `env` and only what Deno needs to find its cache (HOME, DENO_DIR, XDG_CACHE_HOME, PATH), nothing else of
   * this process's environment: a test can then say exactly what the server was given.
   */
  static async start(
    dir: string,
    env: Record<string, string>,
    flags: string[] = ["-A", "--unstable-kv", "--unstable-cron"],
    cleanEnv = false,
  ): Promise<ChildServer> {
    const port = freePort();
    const n = ++ChildServer.#starts;
    const inherited: Record<string, string> = {};
    for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME", "PATH"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) inherited[name] = value;
    }
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, "main.ts"],
      cwd: ROOT,
      clearEnv: cleanEnv,
      env: { ...(cleanEnv ? inherited : {}), ...env, PORT: String(port) },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const errLog = `${dir}/server-${n}.err.log`;
    const pipes = Promise.allSettled([
      child.stdout.pipeTo((await Deno.open(`${dir}/server-${n}.out.log`, { write: true, create: true })).writable),
      child.stderr.pipeTo((await Deno.open(errLog, { write: true, create: true })).writable),
    ]);
    let exited = false;
    const status = child.status.then(async (s) => {
      exited = true;
      await pipes;
      return s;
    });
    const server = new ChildServer(`http://127.0.0.1:${port}`, status, child, pipes, errLog);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !exited) {
      try {
        const res = await fetch(`${server.url}/healthz`);
        await res.body?.cancel();
        if (res.ok) return server;
      } catch { /* not listening yet */ }
      await sleep(20);
    }
    if (!exited) child.kill("SIGKILL");
    await status;
    throw new Error(`server did not become healthy: ${await server.errTail()}`);
  }

  async errTail(): Promise<string> {
    return (await Deno.readTextFile(this.errLog).catch(() => "")).slice(-3000);
  }

  async call(
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    let body: Json = text;
    try {
      body = JSON.parse(text);
    } catch { /* not JSON */ }
    return { status: res.status, body };
  }

  /** A partner's token (the operator's API key was written on the KV file before the server started). */
  async token(apiKey: string, wallet: string): Promise<string> {
    const auth = await this.call("POST", "/auth/token", {
      headers: { "X-API-Key": apiKey },
      body: { walletAddress: wallet },
    });
    if (auth.status !== 200) throw new Error(`POST /auth/token: ${auth.status} ${JSON.stringify(auth.body)}`);
    return auth.body.token as string;
  }

  /** The partner's orders, first page (`GET /orders`). */
  async orders(token: string): Promise<Json[]> {
    const res = await this.call("GET", "/orders", { token });
    if (res.status !== 200) throw new Error(`GET /orders: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.orders;
  }

  /** Resolves with the exit status, or null after `ms`. */
  async exited(ms: number): Promise<Deno.CommandStatus | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)));
    try {
      return await Promise.race([this.status, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    try {
      this.child.kill("SIGTERM");
    } catch { /* already gone */ }
    const s = await this.exited(5_000);
    if (s === null) {
      try {
        this.child.kill("SIGKILL");
      } catch { /* gone */ }
    }
    await this.status;
    await this.pipes;
  }
}
