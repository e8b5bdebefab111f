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
