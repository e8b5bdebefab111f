/**
 * `deno task admin ...`: operator commands working on the same KV as a running server (KV_PATH).
 * Every command prints its result on stdout; `api-key create` prints the new key alone on the last line.
 *
 * Every command is an operator operation (actors/ops/, run by cli/ops_cli.ts) that the admin API serves too, except
 * `evm deploy`, which stays here and only here: it signs with key files on the operator's machine
 * (EVM_MINTER_KEY_FILE, EVM_ADMIN_KEY_FILE, EVM_DEPLOYER_KEY_FILE) that the server must never hold.
 */
import { parseArgs } from "node:util";
import { type Address, getAddress, type LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { isEvmAddress } from "../chains/addresses.ts";
import { EVM_CHAINS, isEvmChain } from "../chains/catalog.ts";
import { adminRoleProblem, deployUAssets, parseSupplyCaps, uAssetsEnvValue } from "../chains/evm/deploy.ts";
import { formatError } from "../chains/shared/redact.ts";
import { type Config, loadConfig } from "../config/env.ts";
import { readMinterKey } from "../config/evm.ts";
import { openKv } from "../kv/open.ts";
import { osUser } from "../kv/audit.ts";
import { findOp, OPS } from "../actors/ops/index.ts";
import { OpError } from "../actors/ops/op.ts";
import { cliOpContext } from "../actors/ops/context.ts";
import { opUsage, OpUsageError, runOpFromArgs } from "./ops_cli.ts";

const USAGE = `usage: deno task admin <command> [--json] [--by <operator>]
  (--json prints the result as JSON; --by names who acts in the audit log, default the OS user)
` + OPS.map((op) => `  ${opUsage(op)}`).join("\n") + `
  evm deploy --chain <base|arbitrum|katana|world|unichain> --supply-cap <N|uSOL=N,...> --minter-allowance <N|uSOL=N,...> [--rpc-url URL]
             admin: EVM_ADMIN_KEY_FILE (deploys) | --admin <address> with EVM_DEPLOYER_KEY_FILE | --admin-is-minter
             (shell only, not in the admin API: it reads key files on the operator's machine)`;

export class UsageError extends Error {}

type Out = (line: string) => void;
type Command = (kv: Deno.Kv, args: string[], out: Out, config: Config, err: Out) => Promise<void>;

const commands: Record<string, Command> = {
  "evm deploy": async (_kv, args, out, _config, err) => {
    const { values } = parseArgs({
      args,
      options: {
        chain: { type: "string" },
        "rpc-url": { type: "string" },
        admin: { type: "string" },
        "admin-is-minter": { type: "boolean" },
        "supply-cap": { type: "string" },
        "minter-allowance": { type: "string" },
      },
      strict: true,
    });
    const chain = values.chain;
    if (!isEvmChain(chain)) throw new UsageError(`--chain must be one of ${EVM_CHAINS.join(", ")}`);
    const rpcUrl = values["rpc-url"] ?? Deno.env.get(`${chain.toUpperCase()}_RPC_URLS`)?.split(",")[0]?.trim();
    if (!rpcUrl) throw new UsageError(`give --rpc-url or set ${chain.toUpperCase()}_RPC_URLS`);
    if (values["supply-cap"] === undefined) {
      throw new UsageError("--supply-cap is required: whole tokens for all five uAssets, or uSOL=N,uXRP=N,...");
    }
    let supplyCap;
    try {
      supplyCap = parseSupplyCaps(values["supply-cap"]);
    } catch (e) {
      throw new UsageError(`--supply-cap: ${e instanceof Error ? e.message : e}`);
    }
    if (values["minter-allowance"] === undefined) {
      throw new UsageError(
        "--minter-allowance is required: what the hot minter key may mint before the admin tops it up, " +
          "whole tokens for all five uAssets, or uSOL=N,uXRP=N,...",
      );
    }
    let minterAllowance;
    try {
      minterAllowance = parseSupplyCaps(values["minter-allowance"], "the minter allowance");
    } catch (e) {
      throw new UsageError(`--minter-allowance: ${e instanceof Error ? e.message : e}`);
    }
    const minterFile = Deno.env.get("EVM_MINTER_KEY_FILE");
    if (!minterFile) throw new UsageError("EVM_MINTER_KEY_FILE must name the minter's key file");
    const minter = privateKeyToAccount(await readMinterKey(minterFile));
    const { admin, deployer } = await deployRoles(values, minter);
    const adminIsMinter = values["admin-is-minter"] ?? false;
    const problem = adminRoleProblem({ admin, minter: minter.address, adminIsMinter });
    if (problem) throw new UsageError(problem);
    if (adminIsMinter) {
      err("WARNING: --admin-is-minter: the hot minter key becomes the contracts' admin. Whoever holds it can lift");
      err("WARNING: the supply cap, unpause and grant any role. Use this only on a throwaway dev chain.");
    }
    const { addresses, deployedAtBlock } = await deployUAssets({
      chain,
      rpcUrl,
      deployer,
      admin,
      minter: minter.address,
      supplyCap,
      minterAllowance,
      adminIsMinter,
    });
    for (const [symbol, address] of Object.entries(addresses)) out(`${symbol}\t${address}`);
    out(`supply cap (wei): ${Object.entries(supplyCap).map(([symbol, cap]) => `${symbol}=${cap}`).join(", ")}`);
    out(`minter allowance (wei): ${Object.entries(minterAllowance).map(([symbol, a]) => `${symbol}=${a}`).join(", ")}`);
    out(`admin ${admin} (DEFAULT_ADMIN_ROLE, PAUSER_ROLE; tops up the minter allowance with configureMinter)`);
    out(`deployed at block ${deployedAtBlock} by ${deployer.address}; minter ${minter.address} (MINTER_ROLE only)`);
    out(`${chain.toUpperCase()}_UASSETS=${uAssetsEnvValue(addresses)}`);
  },
};

/**
 * Who deploys and who becomes admin: the admin key itself (EVM_ADMIN_KEY_FILE), or an admin address with a separate
 * deployer key, or (flagged) the minter. Never the minter by default: see chains/evm/deploy.ts.
 */
async function deployRoles(
  values: { admin?: string; "admin-is-minter"?: boolean },
  minter: LocalAccount,
): Promise<{ admin: Address; deployer: LocalAccount }> {
  const adminFile = Deno.env.get("EVM_ADMIN_KEY_FILE");
  const deployerFile = Deno.env.get("EVM_DEPLOYER_KEY_FILE");
  if (adminFile) {
    if (values.admin !== undefined) throw new UsageError("give EVM_ADMIN_KEY_FILE or --admin, not both");
    if (deployerFile) throw new UsageError("EVM_ADMIN_KEY_FILE deploys by itself: unset EVM_DEPLOYER_KEY_FILE");
    const admin = privateKeyToAccount(await readMinterKey(adminFile, "EVM_ADMIN_KEY_FILE"));
    return { admin: admin.address, deployer: admin };
  }
  if (values.admin !== undefined) {
    if (!isEvmAddress(values.admin) || BigInt(values.admin) === 0n) {
      throw new UsageError(`--admin ${values.admin} is not an EVM address`);
    }
    if (!deployerFile) throw new UsageError("--admin needs EVM_DEPLOYER_KEY_FILE: the key that deploys");
    const deployer = privateKeyToAccount(await readMinterKey(deployerFile, "EVM_DEPLOYER_KEY_FILE"));
    return { admin: getAddress(values.admin), deployer };
  }
  if (values["admin-is-minter"]) {
    const deployer = deployerFile
      ? privateKeyToAccount(await readMinterKey(deployerFile, "EVM_DEPLOYER_KEY_FILE"))
      : minter;
    return { admin: minter.address, deployer };
  }
  throw new UsageError(
    "the contracts need an admin other than the minter key: set EVM_ADMIN_KEY_FILE (that key deploys and becomes " +
      "admin), or give --admin <address> with EVM_DEPLOYER_KEY_FILE, or --admin-is-minter on a throwaway dev chain",
  );
}

/** Runs one admin command; returns the process exit code. */
export async function runAdmin(argv: string[], kv: Deno.Kv, out: Out, err: Out, config: Config): Promise<number> {
  // Operations shared with the admin API (actors/ops/) first: one implementation for both.
  const op = findOp(argv);
  if (op) {
    try {
      const args = argv.slice(op.name.split(" ").length);
      await runOpFromArgs(op, args, (by) => cliOpContext(kv, config, by ?? osUser()), out);
      return 0;
    } catch (e) {
      if (!(e instanceof OpUsageError) && !(e instanceof OpError)) throw e;
      err(`error: ${e.message}`);
      if (e instanceof OpUsageError) err(`usage: deno task admin ${opUsage(op)}`);
      return 2;
    }
  }
  // Commands are one or two words: the longest that names a command wins.
  const two = argv.slice(0, 2).join(" ");
  const name = commands[two] ? two : argv[0] ?? "";
  const command = commands[name];
  if (!command) {
    err(USAGE);
    return 2;
  }
  try {
    await command(kv, argv.slice(name.split(" ").length), out, config, err);
    return 0;
  } catch (e) {
    if (e instanceof UsageError || (e instanceof Error && "code" in e && String(e.code).startsWith("ERR_PARSE_ARGS"))) {
      err(`error: ${e.message}`);
      err(USAGE);
      return 2;
    }
    throw e;
  }
}

if (import.meta.main) {
  let code = 1;
  try {
    const config = loadConfig(Deno.env.toObject());
    const kv = await openKv(config.kvPath);
    try {
      code = await runAdmin(Deno.args, kv, console.log, console.error, config);
    } finally {
      kv.close();
    }
  } catch (e) {
    // Redacted: `evm deploy` failures quote the RPC URL, which may carry an API key.
    console.error(`error: ${formatError(e)}`);
  }
  Deno.exit(code);
}
