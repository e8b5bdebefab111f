/**
 * `ROLE=signer` (docs/operations.md "Roles", the signer process): the process that holds the master mnemonic and the
 * EVM minter key for a keyless worker (one started with the same `SIGNER_SOCKET`). It serves the socket (service.ts)
 * and does the two other things only the mnemonic can: it refills the deposit pool the api processes hand addresses out
 * of (kv/mint_wallets.ts), and publishes the uAsset transfer address the workers and api processes read. It serves no
 * HTTP and runs no watcher or actor; it reads KV to check requests and writes only its outflow window, alerts, the
 * pool and the published address.
 */
import { EVM, type EvmChain, isNativeChain, type UAsset } from "../../chains/catalog.ts";
import { Deriver } from "../../chains/derivation.ts";
import { evmFactsOf, explainerOf } from "../../chains/explainers.ts";
import { MinterKey } from "../../chains/minter_key.ts";
import { redactedLog } from "../../chains/shared/redact.ts";
import { Signer } from "../../chains/signer.ts";
import { evmAddressFromPublicKey } from "../../chains/derivation.ts";
import { uAssetTransferAddress } from "../../chains/transfer_address.ts";
import { chainPlan } from "../../config/chain_mode.ts";
import type { Config } from "../../config/env.ts";
import { minterKeyOf } from "../../config/evm.ts";
import { configuredUtxoFee } from "../../config/utxo.ts";
import { UTXO_TX } from "../../chains/utxo/index.ts";
import { utxoNetwork } from "../../chains/utxo/network.ts";
import { loadWorkerSecrets } from "../../config/secrets.ts";
import { refillDepositPool } from "../../kv/mint_wallets.ts";
import { openKv } from "../../kv/open.ts";
import { publishTransferAddress } from "../../kv/public_config.ts";
import { serveSigner } from "./service.ts";

/** How often the signer tops the deposit pool up (a refill is one read when the pool is full). */
const POOL_REFILL_MS = 5_000;

export interface SignerProcess {
  /** The transfer address it published. */
  transferAddress: string;
  close(): Promise<void>;
}

export async function startSignerProcess(config: Config, log = redactedLog()): Promise<SignerProcess> {
  if (config.role !== "signer" || !config.signerSocket) throw new Error("startSignerProcess needs ROLE=signer");
  const plan = chainPlan(config.chainMode, config.evm, config.utxo, config.account);
  const { mnemonic } = await loadWorkerSecrets(config);
  const signer = Signer.fromMnemonic(mnemonic, plan.utxoNetworks);
  const deriver = Deriver.fromMnemonic(mnemonic, plan.utxoNetworks);
  const minter = plan.live.length > 0 ? new MinterKey(await minterKeyOf(config.evm)) : null;
  const kv = await openKv(config.kvPath, { queues: false });
  try {
    const transferAddress = uAssetTransferAddress(config, deriver);
    await publishTransferAddress(kv, transferAddress);
    const minterAddress = minter ? evmAddressFromPublicKey(minter.publicKey()) : "";
    const live = new Map<EvmChain, { minter: string; chainId: number; uAssets: Record<UAsset, string> }>(
      plan.live.map((chain) => [chain, {
        minter: minterAddress,
        chainId: plan.chainIdOverride ?? EVM[chain].chainId,
        uAssets: config.evm.chains[chain]!.uAssets,
      }]),
    );
    // Live chains only: a simulated chain signs nothing, and a chain this signer does not decode is refused.
    // UTXO chains: the network and fee rule the worker's payer builds with (the same configuration).
    const utxo = new Map(plan.liveUtxo.map((chain) => [chain, {
      network: utxoNetwork(chain, plan.utxoNetworks[chain]),
      family: UTXO_TX[chain],
      fee: configuredUtxoFee(chain, config.utxo),
    }]));
    const explainer = explainerOf({
      simulated: new Set(),
      liveEvm: new Set(plan.live),
      liveUtxo: utxo,
      liveAccount: new Set(plan.liveAccount),
    });
    const evmFacts = evmFactsOf({ simulated: new Set(), transferAddress, live });
    const server = await serveSigner({
      path: config.signerSocket,
      kv,
      signer,
      minter,
      facts: {
        explainer: (chain) => explainer(chain),
        evm: (chain) => EVM_SET.has(chain) ? evmFacts(chain as EvmChain) : undefined,
        hotWallet: (chain, index) => signer.address(chain, index, "hot"),
        depositAddress: (chain, index) => signer.address(chain, index, "deposit"),
        changeAddress: (chain, index) => signer.address(chain, index, "change"),
      },
      utxo: (chain) => utxo.get(chain),
      limits: config.signerHourlyLimits,
      now: () => new Date(),
      log: (m) => log(m),
    });
    const natives = plan.enabled.filter(isNativeChain);
    const refill = async () => {
      for (const chain of natives) {
        await refillDepositPool(kv, chain, (c, i) => deriver.depositAddress(c, i), config.depositPool)
          .catch((err) => log(`signer: deposit pool refill of ${chain} failed; will retry`, err));
      }
    };
    await refill();
    const timer = setInterval(refill, POOL_REFILL_MS);
    log(
      `ROLE=signer: listening on ${config.signerSocket}; transfer address ${transferAddress}` +
        (minter ? `; minter ${minterAddress}` : "") +
        `; hourly limits ${
          Object.entries(config.signerHourlyLimits).map(([c, v]) => `${c}=${v}`).join(",") || "none (no payouts)"
        }`,
    );
    return {
      transferAddress,
      async close() {
        clearInterval(timer);
        await server.close();
        kv.close();
      },
    };
  } catch (err) {
    kv.close();
    throw err;
  }
}

const EVM_SET = new Set<string>(Object.keys(EVM));
