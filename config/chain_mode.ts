/**
 * Which chains run, and how, in each `CHAIN_MODE`. The one rule: a value-bearing chain never runs beside a simulated
 * one an outsider can drive, because a simulated deposit would mint real uAssets and real uAssets sent to us would be
 * "paid" in simulated coins.
 *
 * - `sim` (default, `deno task dev`): every chain simulated, `/sim` mounted. Any `<CHAIN>_RPC_URLS` (EVM, doge, zec,
 *   sol, xrp, sui) is refused.
 * - `live`: only configured chains run; nothing is simulated and `/sim` is never mounted. An EVM chain with
 *   `<CHAIN>_RPC_URLS`, doge/zec with `DOGE_RPC_URLS`/`ZEC_RPC_URLS` and sol/xrp/sui with `SOL_RPC_URLS`/
 *   `XRP_RPC_URLS`/`SUI_RPC_URLS` are live (mainnet); at least one EVM chain must be, since a native chain alone cannot
 *   mint. A chain without configuration is disabled: absent from the config endpoints, refused by the partner routes,
 *   not watched; transfers that concern it are held. Every native node must prove it serves mainnet
 *   (`NODE_IDENTITY`).
 * - `devnet` (tests only): configured chains are live, the rest simulated, `/sim` mounted for the simulated ones. It
 *   refuses to start unless every RPC URL is on a loopback host, every EVM node answers anvil's dev chain id, every
 *   UTXO node answers `chain` "regtest" (Zebra: "test", its name for testnet and regtest alike) and every sol/xrp/sui
 *   node proves it is NOT mainnet, so a real chain (a real chain id, mainnet, a remote URL) can never run in it.
 *   Its live UTXO chains use regtest addresses.
 *
 * `proveChainNodes` asks the nodes; `chainPlan` decides from configuration alone.
 */
import {
  type AccountChain,
  type ChainSymbol,
  EVM_CHAINS,
  type EvmChain,
  NATIVE_CHAINS,
  UTXO_CHAINS,
  type UtxoChain,
} from "../chains/catalog.ts";
import { assertChainId, evmClient } from "../chains/evm/client.ts";
import { utxoNetwork, type UtxoNetworkName } from "../chains/utxo/network.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import { formatError, redactUrls } from "../chains/shared/redact.ts";
import type { ChainMode } from "./env.ts";
import type { EvmConfig } from "./evm.ts";
import { NO_LIVE_UTXO, type UtxoConfig } from "./utxo.ts";
import { ACCOUNT_CHAINS, type AccountConfig, NO_LIVE_ACCOUNT } from "./account.ts";
import { httpFailover } from "../chains/shared/http_failover.ts";

/** anvil's default chain id: the only chain id devnet accepts, never a production chain's. */
export const DEVNET_CHAIN_ID = 31337;

export interface ChainPlan {
  mode: ChainMode;
  /** EVM chains served by their live adapters. */
  live: EvmChain[];
  /** UTXO chains (doge, zec) served by their live adapters, on the network `utxoNetworks` names. */
  liveUtxo: UtxoChain[];
  /**
   * The address network of each UTXO chain: regtest for a devnet live chain, mainnet otherwise (live chains in live
   * mode, and the simulated ledgers, which encode mainnet addresses). Deposit addresses and burn destinations use it.
   */
  utxoNetworks: Record<UtxoChain, UtxoNetworkName>;
  /** Account chains (sol, xrp, sui) served by their live adapters (mainnet in live mode, a local node in devnet). */
  liveAccount: AccountChain[];
  /** Chains served by an embedded simulated ledger. */
  simulated: ChainSymbol[];
  /** Chains that run at all (live or simulated); every other chain is disabled. */
  enabled: ChainSymbol[];
  disabled: ChainSymbol[];
  /** Live EVM adapters sign and check for this chain id instead of the catalog's (devnet: anvil's). */
  chainIdOverride?: number;
}

const ALL: readonly ChainSymbol[] = [...NATIVE_CHAINS, ...EVM_CHAINS];

/**
 * Decides the plan from configuration alone, or throws why the process must not start. `utxo` unset: no UTXO chain
 * configured (callers that only ask about EVM chains).
 */
export function chainPlan(
  mode: ChainMode,
  evm: EvmConfig,
  utxo: UtxoConfig = NO_LIVE_UTXO,
  account: AccountConfig = NO_LIVE_ACCOUNT,
): ChainPlan {
  const configured = EVM_CHAINS.filter((c) => evm.chains[c]);
  const configuredUtxo = UTXO_CHAINS.filter((c) => utxo.chains[c]);
  const configuredAccount = ACCOUNT_CHAINS.filter((c) => account.chains[c]);
  const configuredNative = [...configuredAccount, ...configuredUtxo];
  const rpcVars = [...configured, ...configuredNative].map((c) => `${c.toUpperCase()}_RPC_URLS`);
  const plan = (
    live: EvmChain[],
    liveUtxo: UtxoChain[],
    simulated: ChainSymbol[],
    network: UtxoNetworkName,
    chainIdOverride?: number,
  ): ChainPlan => {
    const running = [...live, ...liveUtxo, ...configuredAccount, ...simulated] as ChainSymbol[];
    const enabled = ALL.filter((c) => running.includes(c));
    const utxoNetworks = Object.fromEntries(
      UTXO_CHAINS.map((c) => [c, liveUtxo.includes(c) ? network : "mainnet"]),
    ) as Record<UtxoChain, UtxoNetworkName>;
    return {
      mode,
      live,
      liveUtxo,
      utxoNetworks,
      liveAccount: configuredAccount,
      simulated,
      enabled,
      disabled: ALL.filter((c) => !enabled.includes(c)),
      chainIdOverride,
    };
  };
  switch (mode) {
    case "sim":
      if (rpcVars.length > 0) {
        throw new Error(
          `CHAIN_MODE=sim refuses ${rpcVars.join(", ")}: sim mode simulates every chain and serves /sim without ` +
            "authentication, so a simulated deposit would mint real uAssets on a live chain. Use CHAIN_MODE=live " +
            "for real chains (the chains without configuration are then disabled), or CHAIN_MODE=devnet for tests " +
            "against local nodes.",
        );
      }
      return plan([], [], [...ALL], "mainnet");
    case "live":
      if (configured.length === 0) {
        const natives = configuredNative.length > 0
          ? ` ${configuredNative.map((c) => `${c.toUpperCase()}_RPC_URLS`).join(", ")} alone cannot run: a deposit ` +
            "on a native chain is minted as a uAsset on an EVM chain, and burns arrive there."
          : " With none, every chain would be disabled and nothing could run.";
        throw new Error(
          "CHAIN_MODE=live needs at least one EVM chain configured (<CHAIN>_RPC_URLS, e.g. BASE_RPC_URLS)." + natives,
        );
      }
      return plan(configured, configuredUtxo, [], "mainnet");
    case "devnet": {
      const urls = [
        ...configured.flatMap((c) => evm.chains[c]!.rpcUrls),
        ...configuredUtxo.flatMap((c) => utxo.chains[c]!.rpcUrls),
        ...configuredAccount.flatMap((c) => account.chains[c]!.rpcUrls),
      ];
      const remote = urls.filter((u) => !isLoopbackUrl(u));
      if (remote.length > 0) {
        throw new Error(
          `CHAIN_MODE=devnet is for tests against local nodes and refuses RPC URLs that are not on a loopback ` +
            `host (127.0.0.0/8, localhost, [::1]): ${remote.map(originOf).join(", ")}. Use CHAIN_MODE=live.`,
        );
      }
      const live = [...configured, ...configuredNative] as ChainSymbol[];
      return plan(
        configured,
        configuredUtxo,
        ALL.filter((c) => !live.includes(c)),
        "regtest",
        DEVNET_CHAIN_ID,
      );
    }
  }
}

/** True when the URL's host is a loopback address: 127.0.0.0/8, localhost, [::1]. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === "localhost" || host === "[::1]") return true;
  const octets = host.split(".");
  return octets.length === 4 && octets[0] === "127" && octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255);
}

/**
 * Asks every live node, each alone (failover could hide a node of another chain behind the first), which chain it
 * serves, and refuses to start on any doubt (a wrong answer, no answer):
 * - devnet: EVM nodes answer anvil's dev chain id; UTXO nodes answer `getblockchaininfo.chain` "regtest" (zec also "test": Zebra's regtest answer). A
 *   mainnet id or a mainnet node (even on loopback: a fork, a tunnel) is refused.
 * - live: UTXO nodes answer "main" (live EVM adapters check their chain id themselves when built).
 * - sol, xrp, sui nodes, each by the question in `NODE_IDENTITY`: mainnet's answer in live mode, anything but
 *   mainnet's in devnet.
 * - sim: nothing to ask.
 */
export async function proveChainNodes(
  plan: ChainPlan,
  evm: EvmConfig,
  utxo: UtxoConfig = NO_LIVE_UTXO,
  account: AccountConfig = NO_LIVE_ACCOUNT,
): Promise<void> {
  if (plan.mode === "sim") return;
  if (plan.mode === "devnet") {
    for (const chain of plan.live) {
      for (const url of evm.chains[chain]!.rpcUrls) {
        const client = evmClient({ chain, urls: [url], chainId: DEVNET_CHAIN_ID, timeoutMs: 5_000 });
        try {
          await assertChainId(client, DEVNET_CHAIN_ID, chain);
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          throw new Error(
            `CHAIN_MODE=devnet runs only against a local dev chain answering chain id ${DEVNET_CHAIN_ID} (anvil); ` +
              `${chain.toUpperCase()}_RPC_URLS ${originOf(url)} does not: ${why}. Use CHAIN_MODE=live for real chains.`,
          );
        }
      }
    }
  }
  for (const chain of plan.liveUtxo) {
    const c = utxo.chains[chain]!;
    const network = utxoNetwork(chain, plan.utxoNetworks[chain]);
    const expected = network.nodeChainNames;
    const variable = `${chain.toUpperCase()}_RPC_URLS`;
    for (const url of c.rpcUrls) {
      const where = `${variable} ${originOf(url)}`;
      let answer: unknown;
      try {
        const rpc = utxoRpc({ chain, urls: [url], timeoutMs: Math.min(c.rpcTimeoutMs, 10_000) });
        answer = (await rpc.call<{ chain?: unknown }>("getblockchaininfo")).chain;
      } catch (err) {
        throw new Error(
          `CHAIN_MODE=${plan.mode} needs to know which chain ${where} serves, and getblockchaininfo failed: ` +
            `${redactUrls(formatError(err).split("\n")[0])}`,
        );
      }
      if (typeof answer !== "string" || !expected.includes(answer)) {
        const wanted = expected.map((n) => JSON.stringify(n)).join(" or ");
        const hint = plan.mode === "devnet"
          ? "CHAIN_MODE=devnet runs only against a local regtest node; use CHAIN_MODE=live for real chains."
          : `CHAIN_MODE=live runs ${chain} on mainnet only; point ${variable} at a mainnet node.`;
        throw new Error(
          `${where} answers getblockchaininfo chain ${JSON.stringify(answer)}, not ${wanted} ` +
            `(${chain} ${network.name}). ${hint}`,
        );
      }
    }
  }
  for (const chain of plan.liveAccount) {
    const c = account.chains[chain];
    if (!c) throw new Error(`${chain} is live in the chain plan but ${chain.toUpperCase()}_RPC_URLS is not set`);
    for (const url of c.rpcUrls) await proveAccountNode(plan.mode, chain, url, c.rpcTimeoutMs);
  }
}

/** Solana mainnet-beta's genesis hash (`getGenesisHash`); devnet's and testnet's differ. */
export const SOL_MAINNET_GENESIS_HASH = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d";
/**
 * Sui mainnet's `chainIdentifier` (GraphQL): the first four bytes, in hex, of its genesis checkpoint's digest
 * (`4btiuiMPvEENsttpZC7CZ53DruC3MAgfznDbASZ7DR6S`).
 */
export const SUI_MAINNET_CHAIN_IDENTIFIER = "35834a8a";

/**
 * How a sol, xrp or sui node says which network it serves: one question (its protocol's request body), where the
 * answer sits, and whether that answer is mainnet's.
 * - sol: JSON-RPC `getGenesisHash`, mainnet-beta's hash.
 * - xrp: `server_info` `info.network_id`: the XRP Ledger mainnet is network 0, which rippled may leave out (testnet
 *   is 1, devnet 2, sidechains above 1024). A devnet rippled must be configured with a `[network_id]` other than 0.
 * - sui: GraphQL `chainIdentifier`, mainnet's "35834a8a".
 */
export const NODE_IDENTITY: Record<AccountChain, {
  question: string;
  body: unknown;
  answerOf(response: unknown): unknown;
  isMainnet(answer: unknown): boolean;
  mainnet: string;
}> = {
  sol: {
    question: "getGenesisHash",
    body: { jsonrpc: "2.0", id: 1, method: "getGenesisHash" },
    answerOf: (r) => field(r, "result"),
    isMainnet: (a) => a === SOL_MAINNET_GENESIS_HASH,
    mainnet: `genesis hash ${SOL_MAINNET_GENESIS_HASH} (mainnet-beta)`,
  },
  xrp: {
    question: "server_info network_id",
    body: { method: "server_info", params: [{}] },
    // Absent is mainnet's answer too: keep "absent" apart from a failed call, which has no `result.info` at all.
    answerOf: (r) => {
      const info = field(field(r, "result"), "info");
      if (typeof info !== "object" || info === null) return undefined;
      return "network_id" in info ? (info as { network_id: unknown }).network_id : "absent";
    },
    isMainnet: (a) => a === 0 || a === "absent",
    mainnet: "network_id 0 or none (the XRP Ledger mainnet)",
  },
  sui: {
    question: "chainIdentifier",
    body: { query: "{ chainIdentifier }" },
    answerOf: (r) => field(field(r, "data"), "chainIdentifier"),
    isMainnet: (a) => a === SUI_MAINNET_CHAIN_IDENTIFIER,
    mainnet: `chainIdentifier ${SUI_MAINNET_CHAIN_IDENTIFIER} (Sui mainnet)`,
  },
};

function field(value: unknown, name: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

/** Asks one sol/xrp/sui node, alone, which network it serves; refuses unless it is mainnet (live) or not (devnet). */
async function proveAccountNode(mode: "live" | "devnet", chain: AccountChain, url: string, timeoutMs: number) {
  const id = NODE_IDENTITY[chain];
  const variable = `${chain.toUpperCase()}_RPC_URLS`;
  const where = `${variable} ${originOf(url)}`;
  let answer: unknown;
  try {
    const http = httpFailover({ variable: chain.toUpperCase(), urls: [url], timeoutMs: Math.min(timeoutMs, 10_000) });
    answer = id.answerOf(await http.post([id.question], id.body));
  } catch (err) {
    throw new Error(
      `CHAIN_MODE=${mode} needs to know which network ${where} serves, and ${id.question} failed: ` +
        `${redactUrls(formatError(err).split("\n")[0])}`,
    );
  }
  const said = answer === undefined ? "nothing usable" : JSON.stringify(answer);
  if (answer === undefined || (typeof answer !== "string" && typeof answer !== "number")) {
    throw new Error(
      `${where} does not answer ${id.question} as a ${chain} node would (it answered ${said}), so CHAIN_MODE=${mode} ` +
        "cannot tell which network it serves",
    );
  }
  if (mode === "live" && !id.isMainnet(answer)) {
    throw new Error(
      `${where} answers ${id.question} ${said}, not ${id.mainnet}. CHAIN_MODE=live runs ${chain} on mainnet ` +
        `only; point ${variable} at a mainnet node.`,
    );
  }
  if (mode === "devnet" && id.isMainnet(answer)) {
    throw new Error(
      `${where} answers ${id.question} ${said}: that is mainnet (${id.mainnet}). CHAIN_MODE=devnet runs only ` +
        "against a local test node; use CHAIN_MODE=live for real chains.",
    );
  }
}

/** Providers put keys in the path or query, and passwords in the userinfo: messages name the origin only. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "<url>";
  }
}
