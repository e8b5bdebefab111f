/**
 * The runtime install set (docs/runtime.md): runtime/deno.json, its lock, and the tools that must stay out of it.
 * Shared by tests/runtime_deps_test.ts and tests/binary_embedding_test.ts.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;
export const RUNTIME_CONFIG = "runtime/deno.json";

/**
 * Packages deno.json maps for tests, benches and the build tasks only. Every deno.json import is either in
 * runtime/deno.json or here, so a new one is classified on purpose; none of these may appear in the runtime lock.
 */
export const TOOLS = [
  "@foundry-rs/anvil-linux-amd64",
  "@openzeppelin/contracts",
  "@seriousme/openapi-schema-validator",
  // Node's types for `deno check` (docs/runtime.md "Why the repository config installs by hand"); nothing runs them.
  "@types/node",
  "ajv",
  "ajv-formats",
  "eventsource-parser",
  "graphql",
  "litesvm-linux-x64-gnu",
  "micro-key-producer",
  "openapi-fetch",
  "openapi-typescript",
  "playwright-core",
  "solc",
  "yaml",
];

export interface Lock {
  npm: Record<string, unknown>;
  workspace: { dependencies: string[] };
}

export const readJson = async (path: string) => JSON.parse(await Deno.readTextFile(`${ROOT}${path}`));

/** "viem@2.57.20_typescript@5.9.3" -> "viem@2.57.20"; "@solana/kit@8.4.0_..." -> "@solana/kit@8.4.0". */
export const packageId = (lockKey: string) => {
  // The name may hold "_" (string_decoder); the version never does, and the peer suffix starts at the first after it.
  const m = lockKey.match(/^(@?[^@]+)@([^_]+)/);
  assert.ok(m, `not a package key: ${lockKey}`);
  return `${m[1]}@${m[2]}`;
};
/** "viem@2.57.20" -> "viem"; "@solana/kit@8.4.0" -> "@solana/kit". */
export const packageName = (id: string) => id.slice(0, id.lastIndexOf("@"));
/** "npm:/viem@2.57.20/" or "npm:viem@2.57.20" -> "viem". */
export const importedPackage = (target: string) => packageName(target.replace(/^npm:\/?/, "").replace(/\/$/, ""));

/** The packages (name@version) of runtime/deno.lock. */
export async function runtimeLockPackages(): Promise<Set<string>> {
  const lock: Lock = await readJson("runtime/deno.lock");
  return new Set(Object.keys(lock.npm).map(packageId));
}

/** The packages (name@version) a node_modules folder of Deno's holds: its `.deno/` folders. */
export async function installedPackages(nodeModules: string): Promise<Set<string>> {
  const installed = new Set<string>();
  for await (const e of Deno.readDir(`${nodeModules}/.deno`)) {
    // Folders are name@version, a scope's slash written as "+"; node_modules and dotfiles are Deno's own.
    if (!e.isDirectory || e.name === "node_modules") continue;
    installed.add(packageId(e.name.startsWith("@") ? e.name.replace("+", "/") : e.name));
  }
  return installed;
}
