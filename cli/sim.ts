/**
 * `deno task sim ...`: the `/sim/*` endpoints from a shell, on the same KV as a running sim-mode server.
 *   deposit  --chain sol --address <deposit address> --amount <lamports> [--from <sender>]
 *   faucet   --chain base --address <0x wallet> --token uSOL --amount <wei>
 *   transfer --chain base --from <0x wallet> --token uSOL --amount <wei>     (to the uAsset transfer address)
 *   balance  --chain base --address <address> [--token uSOL]
 *   faults   --chain base [--rpc-error-rate 0.2] [--revert-next-mint N] [--fail-next-payout N] [--reorg K] [--stall-ms MS]
 */
import { parseArgs } from "node:util";
import { Deriver } from "../chains/derivation.ts";
import { uAssetTransferAddress } from "../chains/transfer_address.ts";
import {
  BalanceInput,
  DepositInput,
  FaucetInput,
  FaultsInput,
  simBalance,
  simDeposit,
  simFaucet,
  simFaults,
  SimRefusal,
  simTransfer,
  TransferInput,
} from "../chains/sim/commands.ts";
import { type Config, loadConfig } from "../config/env.ts";
import { loadSecrets } from "../config/secrets.ts";
import { openKv } from "../kv/open.ts";

const OPTIONS = {
  chain: { type: "string" },
  address: { type: "string" },
  amount: { type: "string" },
  from: { type: "string" },
  token: { type: "string" },
  "rpc-error-rate": { type: "string" },
  "revert-next-mint": { type: "string" },
  "fail-next-payout": { type: "string" },
  reorg: { type: "string" },
  "stall-ms": { type: "string" },
} as const;

const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));

async function transferAddress(config: Config): Promise<string> {
  if (config.burnTransferAddress) return config.burnTransferAddress;
  const { mnemonic } = await loadSecrets(config, () => {});
  return uAssetTransferAddress(config, Deriver.fromMnemonic(mnemonic));
}

export async function runSim(argv: string[], kv: Deno.Kv, config: Config): Promise<unknown> {
  const [command, ...rest] = argv;
  const { values: v } = parseArgs({ args: rest, options: OPTIONS, strict: true });
  switch (command) {
    case "deposit":
      return await simDeposit(kv, DepositInput.parse(v));
    case "faucet":
      return await simFaucet(kv, FaucetInput.parse(v));
    case "transfer":
      return await simTransfer(kv, TransferInput.parse(v), await transferAddress(config));
    case "balance":
      return await simBalance(kv, BalanceInput.parse(v));
    case "faults":
      return await simFaults(
        kv,
        FaultsInput.parse({
          chain: v.chain,
          rpcErrorRate: num(v["rpc-error-rate"]),
          revertNextMint: num(v["revert-next-mint"]),
          failNextPayout: num(v["fail-next-payout"]),
          reorgDepth: num(v.reorg),
          stallMs: num(v["stall-ms"]),
        }),
      );
    default:
      throw new SimRefusal("usage: deno task sim deposit|faucet|transfer|balance|faults --chain <symbol> ...");
  }
}

if (import.meta.main) {
  const config = loadConfig(Deno.env.toObject());
  if (config.chainMode !== "sim") {
    console.error("deno task sim works only with CHAIN_MODE=sim");
    Deno.exit(2);
  }
  const kv = await openKv(config.kvPath);
  try {
    const result = await runSim(Deno.args, kv, config);
    console.log(JSON.stringify(result, (_k, x) => (typeof x === "bigint" ? x.toString() : x)));
  } catch (err) {
    const message = err instanceof Error && "issues" in err
      ? JSON.stringify((err as { issues: unknown }).issues)
      : err instanceof Error
      ? err.message
      : String(err);
    console.error(`error: ${message}`);
    kv.close();
    Deno.exit(2);
  }
  kv.close();
}
