/**
 * `deno task admin ...`: operator commands working on the same KV as a running server (KV_PATH).
 * Every command prints its result on stdout; `api-key create` prints the new key alone on the last line.
 */
import { parseArgs } from "node:util";
import { isEvmAddress } from "../chains/addresses.ts";
import { type Config, loadConfig } from "../config/env.ts";
import { openKv } from "../kv/open.ts";
import { createApiKey, listApiKeys, PARTNER_ID_PATTERN, revokeApiKey } from "../kv/api_keys.ts";
import { moveUserWallet, setUserWalletStatus } from "../kv/user_wallets.ts";
import { appendAudit, osUser } from "../kv/audit.ts";
import { findOp, OPS } from "../actors/ops/index.ts";
import { OpError } from "../actors/ops/op.ts";
import { chainsFromConfig, cliOpContext, settingsOf } from "../actors/ops/context.ts";
import { opUsage, OpUsageError, runOpFromArgs } from "./ops_cli.ts";
import { getOrder, type Order } from "../kv/orders.ts";
import {
  addReschedule,
  dueAtKey,
  listDust,
  listHeld,
  type OrderHold,
  orderHoldKey,
  type WatchResume,
  watchResumeKey,
} from "../kv/pipeline.ts";
import { addSpent, type CoinHold, coinHoldKey } from "../kv/treasury.ts";
import { treasuryReport, treasuryText } from "../actors/treasury_report.ts";
import { accountTreasuryReport, accountTreasuryText } from "../actors/account_treasury_report.ts";
import { consolidate } from "../actors/sweeper.ts";
import { applyOperatorEvent, isStuckOnTransaction, settleStuckOrder } from "../actors/operator.ts";
import type { DeadIntent } from "../actors/transition.ts";
import { type Address, getAddress, type LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  EVM_CHAINS,
  isAccountChain,
  isEvmChain,
  isNativeChain,
  isUtxoChain,
  NATIVE_CHAINS,
  UTXO_CHAINS,
  type UtxoChain,
} from "../chains/catalog.ts";
import { adminRoleProblem, deployUAssets, parseSupplyCaps, uAssetsEnvValue } from "../chains/evm/deploy.ts";
import { readMinterKey } from "../config/evm.ts";
import { settingsFromConfig } from "../config/pipeline.ts";
import { formatError } from "../chains/shared/redact.ts";

const USAGE = `usage: deno task admin <command>
  api-key create --partner <id> [--expires-in-days N]
  api-key revoke <keyId>
  api-key list
  wallet deactivate <address>
  wallet activate <address>
  wallet move <address> --to-partner <id> [--by <operator>]
  watch resume <chain> --from <block> [--by <operator>]
  orders held
  order show <id>
  order cancel <id>            (minting/burning: only once its transaction is proven dead)
  order retry <id>             (minting/burning: proven dead, then a new transaction is signed)
  evm deploy --chain <base|arbitrum|katana|world|unichain> --supply-cap <N|uSOL=N,uXRP=N,...> [--rpc-url URL]
             admin: EVM_ADMIN_KEY_FILE (deploys) | --admin <address> with EVM_DEPLOYER_KEY_FILE | --admin-is-minter
  order release <id> [--by <operator>]   (lift a hold set by a reorg past finality)
  treasury --chain <doge|zec> [--json]   (reads KV only; no node is asked)
  treasury --chain <sol|xrp|sui> [--json]   (hot wallet, sweeps, payouts; asks the node for the hot wallet's balance)
  utxo consolidate --chain <doge|zec> [--max-inputs N] [--min-inputs M] [--by <operator>]
  utxo release-coin --chain <doge|zec> <txid:index> [--by <operator>]   (a coin held after a reorg, checked on the node)
  utxo forget-coin --chain <doge|zec> <txid:index> [--by <operator>]    (a held coin the node does not have)
` + "\n" + OPS.map((op) => `  ${opUsage(op)}`).join("\n");

export class UsageError extends Error {}

const PARTNER_ID_MESSAGE = "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";

type Out = (line: string) => void;
type Command = (kv: Deno.Kv, args: string[], out: Out, config: Config, err: Out) => Promise<void>;

const commands: Record<string, Command> = {
  "api-key create": async (kv, args, out) => {
    const { values } = parseArgs({
      args,
      options: { partner: { type: "string" }, "expires-in-days": { type: "string" } },
      strict: true,
    });
    if (!values.partner) throw new UsageError("--partner is required");
    if (!PARTNER_ID_PATTERN.test(values.partner)) throw new UsageError(`--partner ${PARTNER_ID_MESSAGE}`);
    const days = values["expires-in-days"];
    if (days !== undefined && !/^[1-9]\d{0,4}$/.test(days)) {
      throw new UsageError("--expires-in-days must be a positive whole number");
    }
    const { apiKey, record } = await createApiKey(kv, values.partner, {
      expiresInDays: days === undefined ? undefined : Number(days),
    });
    out(
      `created API key ${record.keyId} for partner ${record.partnerId}` +
        (record.expiresAt ? `, expires ${record.expiresAt}` : ", no expiry"),
    );
    out("the secret is shown once and cannot be recovered:");
    out(apiKey);
  },
  "api-key revoke": async (kv, args, out) => {
    const keyId = single(args, "<keyId>");
    const revoked = await revokeApiKey(kv, keyId);
    if (!revoked) throw new UsageError(`no API key ${keyId}`);
    out(`revoked ${keyId} at ${revoked.revokedAt}; tokens it issued no longer work`);
  },
  "api-key list": async (kv, args, out) => {
    if (args.length) throw new UsageError("api-key list takes no arguments");
    const now = Date.now();
    for (const k of await listApiKeys(kv)) {
      const state = k.revokedAt
        ? `revoked ${k.revokedAt}`
        : k.expiresAt && Date.parse(k.expiresAt) <= now
        ? `expired ${k.expiresAt}`
        : `active${k.expiresAt ? ` until ${k.expiresAt}` : ""}`;
      out(`${k.keyId}\tpartner=${k.partnerId}\tcreated=${k.createdAt}\t${state}`);
    }
  },
  "wallet deactivate": async (kv, args, out) => {
    const address = walletArg(args);
    const w = await setUserWalletStatus(kv, address, "inactive", { createIfMissing: true });
    out(`wallet ${w!.address} is inactive: its tokens are refused and new deposits fail`);
  },
  "wallet move": async (kv, args, out) => {
    const { values, positionals } = parseArgs({
      args,
      options: { "to-partner": { type: "string" }, by: { type: "string" } },
      allowPositionals: true,
      strict: true,
    });
    const address = walletArg(positionals);
    const to = values["to-partner"];
    if (!to) throw new UsageError("--to-partner is required");
    if (!PARTNER_ID_PATTERN.test(to)) throw new UsageError(`--to-partner ${PARTNER_ID_MESSAGE}`);
    const by = values.by?.trim() || osUser();
    const res = await moveUserWallet(kv, address, to, by);
    if (!res.ok) throw new UsageError(res.error);
    const from = (res.audit.before as { partnerId: string }).partnerId || "(no partner)";
    out(`wallet ${res.wallet.address} moved from ${from} to ${to} by ${by} (audit ${res.audit.id})`);
    out(`tokens issued to ${from} are refused from now on; ${to}'s API keys can issue tokens for it`);
  },
  "watch resume": async (kv, args, out) => {
    const { values, positionals } = parseArgs({
      args,
      options: { from: { type: "string" }, by: { type: "string" } },
      allowPositionals: true,
      strict: true,
    });
    const chain = single(positionals, "<chain>");
    if (!isNativeChain(chain) && !isEvmChain(chain)) {
      throw new UsageError(`<chain> must be one of ${[...NATIVE_CHAINS, ...EVM_CHAINS].join(", ")}`);
    }
    if (values.from === undefined || !/^\d{1,12}$/.test(values.from)) {
      throw new UsageError("--from <block> is required: a block number below the fork, which you have checked");
    }
    const fromBlock = Number(values.from);
    const by = values.by?.trim() || osUser();
    const at = new Date();
    const op = kv.atomic();
    const resume: WatchResume = { fromBlock, by, at: at.toISOString() };
    op.set(watchResumeKey(chain), resume);
    const audit = appendAudit(op, { by, action: "watch.resume", subject: chain, before: null, after: resume }, at);
    await op.commit();
    out(`watcher ${chain} will rescan from block ${fromBlock} at its next tick (audit ${audit.id})`);
  },
  "orders held": async (kv, args, out) => {
    if (args.length) throw new UsageError("orders held takes no arguments");
    const held = await listHeld(kv);
    for (const h of held) {
      out(
        `${h.chain}\t${h.txHash}:${h.index}\tfrom=${h.from}\t${h.amount} ${h.asset}\tblock=${h.blockNumber}\t${h.reason}`,
      );
    }
    out(`${held.length} held transfer(s); they are never paid automatically`);
    const dust = await listDust(kv);
    for (const d of dust) {
      out(
        `${d.chain}\tdust\tfrom=${d.sender}\t${d.sum} ${d.asset} in ${d.count} transfer(s)\t` +
          `first=${d.firstSeenAt}\tlast=${d.lastSeenAt}\t${d.reason}`,
      );
    }
    out(`${dust.length} dust aggregate(s): sub-minimum transfers from outsiders, counted, never paid`);
  },
  "order show": async (kv, args, out) => {
    const id = single(args, "<id>");
    const entry = await getOrder(kv, id);
    if (entry.versionstamp === null) throw new UsageError(`no order ${id}`);
    if (entry.invalid) {
      // Shown as stored, so an operator can repair it; the pipeline does not step it meanwhile.
      out(JSON.stringify(entry.raw, null, 2));
      throw new UsageError(entry.invalid.message);
    }
    out(JSON.stringify(entry.value, null, 2));
  },
  "order cancel": async (kv, args, out, config) => {
    const id = single(args, "<id>");
    const order = (await getOrder(kv, id)).value;
    if (order && isStuckOnTransaction(order)) {
      const res = await settleStuckOrder(kv, await statusChains(kv, config), id, "cancel");
      if (!res.ok) throw new UsageError(res.error);
      out(`order ${id}: its transaction is proven dead (${deadProofOf(res.order)}); the order is cancelled`);
      return;
    }
    const res = await applyOperatorEvent(kv, id, { type: "cancel", reason: "cancelled by operator" });
    if (!res.ok) throw new UsageError(res.error);
    out(`order ${id} is cancelled`);
  },
  "order retry": async (kv, args, out, config) => {
    const id = single(args, "<id>");
    const entry = await getOrder(kv, id);
    if (entry.versionstamp === null) throw new UsageError(`no order ${id}`);
    if (entry.invalid) throw new UsageError(entry.invalid.message);
    const order = entry.value;
    if (isStuckOnTransaction(order)) {
      const res = await settleStuckOrder(kv, await statusChains(kv, config), id, "retry");
      if (!res.ok) throw new UsageError(res.error);
      out(
        `order ${id}: its transaction is proven dead (${deadProofOf(res.order)}); the order is processing again ` +
          "and the pipeline signs a new transaction",
      );
      return;
    }
    // A retried timeout waits again for as long as its source chain allows (live chains have their own limits).
    const settings = settingsFromConfig(config, "");
    const confirmBy = new Date(Date.now() + settings.confirmationTimeoutMs(order.sourceChain)).toISOString();
    const res = await applyOperatorEvent(kv, id, { type: "retry", confirmBy });
    if (!res.ok) throw new UsageError(res.error);
    out(`order ${id} is ${res.order.status} again; the pipeline picks it up`);
  },
  "evm deploy": async (_kv, args, out, _config, err) => {
    const { values } = parseArgs({
      args,
      options: {
        chain: { type: "string" },
        "rpc-url": { type: "string" },
        admin: { type: "string" },
        "admin-is-minter": { type: "boolean" },
        "supply-cap": { type: "string" },
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
      adminIsMinter,
    });
    for (const [symbol, address] of Object.entries(addresses)) out(`${symbol}\t${address}`);
    out(`supply cap (wei): ${Object.entries(supplyCap).map(([symbol, cap]) => `${symbol}=${cap}`).join(", ")}`);
    out(`admin ${admin} (DEFAULT_ADMIN_ROLE, PAUSER_ROLE)`);
    out(`deployed at block ${deployedAtBlock} by ${deployer.address}; minter ${minter.address} (MINTER_ROLE only)`);
    out(`${chain.toUpperCase()}_UASSETS=${uAssetsEnvValue(addresses)}`);
  },
  "order release": async (kv, args, out) => {
    const { values, positionals } = parseArgs({
      args,
      options: { by: { type: "string" } },
      allowPositionals: true,
      strict: true,
    });
    const id = single(positionals, "<id>");
    const by = values.by?.trim() || osUser();
    const hold = await kv.get<OrderHold>(orderHoldKey(id));
    if (hold.value === null) throw new UsageError(`order ${id} is not held`);
    const at = new Date();
    const op = kv.atomic().check(hold).delete(hold.key);
    // Due now: the pipeline steps it at its next sweep instead of after its long wait.
    addReschedule(op, id, await kv.get<number>(dueAtKey(id)), at.getTime());
    const audit = appendAudit(op, { by, action: "order.release", subject: id, before: hold.value, after: null }, at);
    if (!(await op.commit()).ok) throw new UsageError(`order ${id} changed meanwhile; try again`);
    out(`order ${id} released by ${by} (audit ${audit.id}); the pipeline steps it again`);
  },
  "treasury": async (kv, args, out, config) => {
    const { values } = parseArgs({
      args,
      options: { chain: { type: "string" }, json: { type: "boolean" } },
      strict: true,
    });
    const chain = values.chain;
    if (isAccountChain(chain)) {
      // The hot wallet's balance is read through the chain's reader: the node in live mode, the sim ledger in sim.
      const report = await accountTreasuryReport(kv, await statusChains(kv, config), chain);
      if (values.json) out(JSON.stringify(report, null, 2));
      else for (const line of accountTreasuryText(report)) out(line);
      return;
    }
    if (!isUtxoChain(chain)) throw new UsageError(`--chain must be one of ${NATIVE_CHAINS.join(", ")}`);
    const report = await treasuryReport(kv, chain, pipelineSettings(config).utxoFee(chain));
    if (values.json) out(JSON.stringify(report, null, 2));
    else for (const line of treasuryText(report)) out(line);
  },
  "utxo consolidate": async (kv, args, out, config) => {
    const { values } = parseArgs({
      args,
      options: {
        chain: { type: "string" },
        "max-inputs": { type: "string" },
        "min-inputs": { type: "string" },
        by: { type: "string" },
      },
      strict: true,
    });
    const chain = utxoChainArg(values.chain);
    const maxInputs = countArg(values["max-inputs"], "--max-inputs", DEFAULT_CONSOLIDATION_MAX_INPUTS);
    const minInputs = countArg(values["min-inputs"], "--min-inputs", 2);
    if (minInputs > maxInputs) throw new UsageError("--min-inputs must not exceed --max-inputs");
    const by = values.by?.trim() || osUser();
    const settings = pipelineSettings(config);
    const res = await consolidate(kv, await statusChains(kv, config), chain, settings.confirmations(chain), {
      fee: settings.utxoFee(chain),
      maxInputs,
      minInputs,
      by,
      now: new Date(),
      afterRecord: () => {
        if (Deno.env.get("ADMIN_CRASH_AFTER_RECORD") === "1") Deno.exit(137); // tests: a crash before the broadcast
      },
    });
    if (res.kind === "nothing") {
      out(`nothing to consolidate on ${chain}: ${res.reason} (${res.spendable} spendable coin(s))`);
      return;
    }
    const c = res.consolidation;
    const what =
      `${c.inputs.length} coin(s) -> ${c.output.amount} at ${c.output.address} (fee ${c.fee}), tx ${c.txHash}`;
    if (res.kind === "open") {
      out(`consolidation ${c.id} on ${chain} is already open (recorded ${c.preparedAt} by ${c.by}): ${what}`);
      out(`its state now: ${res.step}; no second consolidation was started`);
      return;
    }
    out(`consolidation ${c.id} on ${chain} recorded by ${by} (audit ${res.audit.id}): ${what}`);
    out(
      res.broadcast === "sent"
        ? "broadcast; the running service settles it once final"
        : "recorded but the broadcast failed; the running service (or this command again) sends the same bytes",
    );
  },
  "utxo release-coin": async (kv, args, out) => await coinHoldCommand(kv, args, out, "release"),
  "utxo forget-coin": async (kv, args, out) => await coinHoldCommand(kv, args, out, "forget"),
  "wallet activate": async (kv, args, out) => {
    const address = walletArg(args);
    const w = await setUserWalletStatus(kv, address, "active");
    if (!w) throw new UsageError(`no wallet ${address.toLowerCase()}`);
    out(`wallet ${w.address} is active`);
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

const statusChains = chainsFromConfig;
const pipelineSettings = settingsOf;

/** Coins merged by one consolidation unless --max-inputs says otherwise (a transaction well under relay limits). */
const DEFAULT_CONSOLIDATION_MAX_INPUTS = 50;

function utxoChainArg(chain: string | undefined): UtxoChain {
  if (!isUtxoChain(chain)) throw new UsageError(`--chain must be one of ${UTXO_CHAINS.join(", ")}`);
  return chain;
}

function countArg(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9]\d{0,3}$/.test(value)) throw new UsageError(`${name} must be a whole number from 1 to 9999`);
  return Number(value);
}

/**
 * A coin held after a reorg past finality: `release` once the operator saw it unspent on the node (`gettxout`), so
 * payouts may spend it again; `forget` when the node does not have it (the reorg took it away), so it leaves the
 * treasury (a spent marker stays, so a rescan never adds it back). Audited.
 */
async function coinHoldCommand(kv: Deno.Kv, args: string[], out: Out, action: "release" | "forget") {
  const { values, positionals } = parseArgs({
    args,
    options: { chain: { type: "string" }, by: { type: "string" } },
    allowPositionals: true,
    strict: true,
  });
  const chain = utxoChainArg(values.chain);
  const text = single(positionals, "<txid:index>");
  const match = /^([0-9A-Za-z]{1,128}):(\d{1,6})$/.exec(text);
  if (!match) throw new UsageError(`${text} is not an outpoint <txid:index>`);
  const outpoint = { txHash: match[1], index: Number(match[2]) };
  const by = values.by?.trim() || osUser();
  const hold = await kv.get<CoinHold>(coinHoldKey(chain, outpoint));
  if (hold.value === null) throw new UsageError(`coin ${text} on ${chain} is not held`);
  const at = new Date();
  const op = kv.atomic().check(hold).delete(hold.key);
  if (action === "forget") addSpent(op, chain, [outpoint], `forgotten by operator ${by}`);
  const audit = appendAudit(
    op,
    { by, action: `utxo.${action}-coin`, subject: `${chain}:${text}`, before: hold.value, after: null },
    at,
  );
  if (!(await op.commit()).ok) throw new UsageError(`coin ${text} changed meanwhile; try again`);
  out(
    action === "release"
      ? `coin ${text} on ${chain} released by ${by} (audit ${audit.id}); payouts may spend it`
      : `coin ${text} on ${chain} forgotten by ${by} (audit ${audit.id}); it left the treasury`,
  );
}

function deadProofOf(order: Order): string {
  const dead = order.details.deadIntents as DeadIntent[] | undefined;
  return dead?.at(-1)?.detail ?? "see the order's deadIntents";
}

function single(args: string[], name: string): string {
  if (args.length !== 1) throw new UsageError(`expected exactly one ${name}`);
  return args[0];
}

function walletArg(args: string[]): string {
  const address = single(args, "<address>");
  if (!isEvmAddress(address)) throw new UsageError(`${address} is not an EVM address`);
  return address;
}

/** Runs one admin command; returns the process exit code. */
export async function runAdmin(argv: string[], kv: Deno.Kv, out: Out, err: Out, config: Config): Promise<number> {
  // Operations shared with the admin API (actors/ops/) first: one implementation for both.
  const op = findOp(argv);
  // A command of more words than the operation found wins (`orders held` before the `orders` operation).
  if (op && !(op.name.split(" ").length < 2 && commands[argv.slice(0, 2).join(" ")])) {
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
