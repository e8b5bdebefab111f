/** Runs `deno task <name> ...` as an operator would, in its own process, against a given KV file. */
const ROOT = new URL("../..", import.meta.url).pathname;

export async function runTask(name: "admin" | "sim", env: Record<string, string>, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", name, ...args],
    cwd: ROOT,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/**
 * Starts the service (`main.ts`) as an operator would, and reports whether it came up: stopped as soon as it says it
 * is listening, or its exit code and everything it printed when it refused to start.
 */
export async function tryStartService(env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-cron", "main.ts"],
    cwd: ROOT,
    env: { PORT: "0", PIPELINE: "off", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  let started = false;
  const read = async (stream: ReadableStream<Uint8Array>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      output += text;
      if (!started && output.includes("listening on")) {
        started = true;
        child.kill("SIGTERM");
      }
    }
  };
  await Promise.all([read(child.stdout), read(child.stderr)]);
  const { code } = await child.status;
  return { started, code, output };
}
