/**
 * Builds an `OpContext` outside the server (the CLI): chains and settings from the configuration, as the server
 * derives them. The server builds its own from its services (routes/admin.ts).
 */
import { publishedTransferAddress } from "../../kv/public_config.ts";
import { zeroAddress } from "viem";
import type { Chains } from "../../chains/adapter.ts";
import { buildChains, liveSigner } from "../../config/registry.ts";
import { uAssetTransferAddress } from "../../chains/transfer_address.ts";
import { Deriver } from "../../chains/derivation.ts";
import { chainPlan } from "../../config/chain_mode.ts";
import type { Config } from "../../config/env.ts";
import { settingsFromConfig } from "../settings_from_config.ts";
import { loadApiSecrets, loadSecrets } from "../../config/secrets.ts";
import type { PipelineSettings } from "../context.ts";
import type { OpContext } from "./op.ts";

/**
 * The chains as the server builds them from this configuration (sim ledgers share the KV file, live chains are
 * asked over their RPC URLs). The transfer address, which only EVM scans need and whose derivation needs the
 * mnemonic, is left out.
 */
export async function chainsFromConfig(kv: Deno.Kv, config: Config): Promise<Chains> {
  const plan = chainPlan(config.chainMode, config.evm, config.utxo, config.account);
  // Live native chains sign with the master mnemonic's keys (one Signer), on the plan's networks, as the server does.
  const signer = plan.liveUtxo.length + plan.liveAccount.length > 0
    ? liveSigner(plan, (await loadSecrets(config)).mnemonic)
    : undefined;
  const settings = settingsFromConfig(config, "", plan.enabled, plan);
  return (await buildChains(kv, plan, config.evm, zeroAddress, {
    hotWalletGenesis: config.simHotWalletGenesis,
    utxo: signer && plan.liveUtxo.length > 0 ? { config: config.utxo, signer, settings } : undefined,
    account: signer && plan.liveAccount.length > 0 ? { config: config.account, signer, settings } : undefined,
  })).chains;
}

/** The pipeline's rules (confirmations, fee rules) as the server derives them from this configuration. */
export function settingsOf(config: Config): PipelineSettings {
  const plan = chainPlan(config.chainMode, config.evm, config.utxo, config.account);
  return settingsFromConfig(config, "", plan.enabled, plan);
}

/** The CLI's context: chains built once, on first use. */
export function cliOpContext(kv: Deno.Kv, config: Config, by: string): OpContext {
  let chains: Promise<Chains> | undefined;
  let transfer: Promise<string> | undefined;
  let kid: Promise<string | null> | undefined;
  return {
    kv,
    config,
    by,
    via: "cli",
    now: () => new Date(),
    chains: () => chains ??= chainsFromConfig(kv, config),
    settings: () => settingsOf(config),
    transferAddress: () =>
      transfer ??= (async () => {
        if (config.burnTransferAddress) return config.burnTransferAddress;
        // ROLE=api holds no mnemonic (docs/operations.md "Roles"): the address the worker published, never a generated
        // one.
        if (config.role === "api") {
          const published = await publishedTransferAddress(kv);
          if (!published) throw new Error("ROLE=api: no worker has published the uAsset transfer address on this KV");
          return published;
        }
        const plan = chainPlan(config.chainMode, config.evm, config.utxo, config.account);
        const deriver = Deriver.fromMnemonic((await loadSecrets(config)).mnemonic, plan.utxoNetworks);
        return uAssetTransferAddress(config, deriver);
      })(),
    // The key the servers of this configuration sign with: the same secret file (or JWT_PRIVATE_KEY in deploy mode).
    // ROLE=worker holds no JWT key, ROLE=api no mnemonic (docs/operations.md "Roles"): each loads only what it holds.
    signingKid: () =>
      kid ??= config.role === "worker"
        ? Promise.resolve(null)
        : (config.role === "api" ? loadApiSecrets(config) : loadSecrets(config)).then((s) => s.jwt.publicJwk.kid),
  };
}
