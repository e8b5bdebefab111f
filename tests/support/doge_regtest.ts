/**
 * The doge adapter wired to a litecoind regtest node (tests/support/litecoind.ts), standing in for Dogecoin Core:
 * our keys from the test mnemonic, doge regtest addresses (P2PKH version 111, which litecoind regtest shares), and
 * helpers to make deposits to us and turn them into payout coins.
 */
import type { PayoutCoin } from "../../chains/adapter.ts";
import { utxoFee } from "../../chains/shared/utxo_fee.ts";
import { Signer } from "../../chains/signer.ts";
import { type UtxoAdapters, utxoAdapters, type UtxoSettings } from "../../chains/utxo/index.ts";
import { p2pkhAddress, utxoNetwork } from "../../chains/utxo/network.ts";
import { type UtxoRpc, utxoRpc } from "../../chains/utxo/rpc.ts";
import type { Litecoind } from "./litecoind.ts";

/** Test-only mnemonic (public): never fund its keys anywhere real. */
export const TEST_MNEMONIC = "test test test test test test test test test test test junk";

export const DOGE_REGTEST = utxoNetwork("doge", "regtest");

export interface DogeRegtest extends UtxoAdapters {
  signer: Signer;
  rpc: UtxoRpc;
  settings: UtxoSettings;
  /** Our deposit address at `index`. */
  address(index: number): string;
  /** Pays `sats` from the node's wallet to our deposit address `index` and mines it; the coin, confirmed. */
  depositCoin(index: number, sats: bigint): Promise<PayoutCoin>;
}

export function dogeOnLitecoind(
  node: Litecoind,
  opts: { confirmations?: number; onRpc?: (info: { url: string; method: string }) => void } = {},
): DogeRegtest {
  const signer = Signer.fromMnemonic(TEST_MNEMONIC);
  const rpc = utxoRpc({ chain: "doge", urls: [node.url], onRpc: opts.onRpc });
  const settings: UtxoSettings = { confirmations: opts.confirmations ?? 3, fee: utxoFee("doge"), expiryWindow: 40 };
  const adapters = utxoAdapters({ chain: "doge", network: DOGE_REGTEST, rpc, signer, settings });
  const address = (index: number) => p2pkhAddress(DOGE_REGTEST, signer.publicKey("doge", index));
  return {
    ...adapters,
    signer,
    rpc,
    settings,
    address,
    async depositCoin(index, sats) {
      const to = address(index);
      const txHash = await node.send(to, sats);
      await node.mine(1);
      const status = await adapters.reader.txStatus(txHash);
      if (status.state !== "included") throw new Error(`deposit ${txHash} not mined: ${JSON.stringify(status)}`);
      const transfer = (await adapters.reader.transfersOf(txHash))!.find((t) => t.to === to && t.amount === sats)!;
      return {
        txHash,
        index: transfer.index,
        amount: sats,
        address: to,
        derivationIndex: index,
        height: status.blockNumber,
      };
    },
  };
}
