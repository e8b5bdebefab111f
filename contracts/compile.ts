// Compiles contracts/UAsset.sol with solc-js (offline) against the OpenZeppelin sources that Deno installs into
// node_modules from the pinned `@openzeppelin/contracts/` import. Pure apart from reading files: the same sources,
// compiler and settings always give the same artifact, which is what lets a test detect a stale artifact.
import solc from "solc";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";

export const CONTRACT_NAME = "UAsset";
const SOURCE_PATH = "contracts/UAsset.sol";

const REPO_ROOT = new URL("../", import.meta.url);
const NODE_MODULES = new URL("node_modules/", REPO_ROOT);

// Part of the artifact's identity: changing any of these changes the bytecode, so they are hashed with the sources.
const SETTINGS = {
  evmVersion: "cancun",
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { [SOURCE_PATH]: { [CONTRACT_NAME]: ["abi", "evm.bytecode.object"] } },
} as const;

export type AbiEntry = Record<string, unknown>;

export interface CompiledUAsset {
  abi: AbiEntry[];
  bytecode: `0x${string}`;
  sourceHash: string;
}

interface SolcError {
  severity: "error" | "warning" | "info";
  formattedMessage: string;
}

interface SolcOutput {
  errors?: SolcError[];
  contracts?: Record<string, Record<string, { abi: AbiEntry[]; evm: { bytecode: { object: string } } }>>;
}

function readImport(path: string): string {
  if (!path.startsWith("@openzeppelin/contracts/")) {
    throw new Error(`unexpected Solidity import ${path}: only @openzeppelin/contracts/ is vendored`);
  }
  const file = new URL(path, NODE_MODULES);
  try {
    return Deno.readTextFileSync(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      const where = fileURLToPath(file);
      throw new Error(`${where} is missing: run \`deno install\` (installs the pinned @openzeppelin/contracts)`);
    }
    throw err;
  }
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Recursively sorts object keys so the serialized artifact does not depend on the compiler's key order. */
export function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeys) as T;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)])) as T;
  }
  return value;
}

export function compileUAsset(): CompiledUAsset {
  const main = Deno.readTextFileSync(new URL(SOURCE_PATH, REPO_ROOT));
  const imported = new Map<string, string>();
  const input = { language: "Solidity", sources: { [SOURCE_PATH]: { content: main } }, settings: SETTINGS };

  const findImports = (path: string) => {
    try {
      const contents = readImport(path);
      imported.set(path, contents);
      return { contents };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  };

  const output: SolcOutput = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  }
  const contract = output.contracts?.[SOURCE_PATH]?.[CONTRACT_NAME];
  if (!contract) throw new Error(`solc produced no ${CONTRACT_NAME} in ${SOURCE_PATH}`);

  const sources = Object.fromEntries(
    [[SOURCE_PATH, main] as const, ...imported].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const identity = sortKeys({ compiler: solc.version(), settings: SETTINGS, sources });
  const sourceHash = sha256Hex(JSON.stringify(identity));

  return {
    abi: sortKeys(contract.abi),
    bytecode: `0x${contract.evm.bytecode.object}`,
    sourceHash: `sha256:${sourceHash}`,
  };
}
