/**
 * What a Zcash cold address holds of our cold sweeps, on a Zebra-shaped local server (tests/support/zebra_rpc_server.ts
 * stands in for Zebra: no Zebra runs here). Zebra has no `gettxout`, so the UTXO reader's `unspent` answers from
 * Zebra's `getaddressutxos` (its own address index; best chain, mempool ignored): an output is unspent while it is
 * listed there, and not once a mined transaction spends it.
 */
import assert from "node:assert/strict";
import type { PayoutCoin } from "../chains/adapter.ts";
import { Signer } from "../chains/signer.ts";
import { utxoFee } from "../chains/shared/utxo_fee.ts";
import { utxoAdapters } from "../chains/utxo/index.ts";
import { p2pkhAddress, utxoNetwork } from "../chains/utxo/network.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";

const ZEC = 100_000_000n;
const network = utxoNetwork("zec", "regtest");
/** Test-only mnemonic (public): never fund its keys anywhere real. */
const signer = Signer.fromMnemonic("test test test test test test test test test test test junk");
const address = (index: number) => p2pkhAddress(network, signer.publicKey("zec", index));

Deno.test("zec cold outputs on a Zebra-shaped server: unspent answered from getaddressutxos (no gettxout), spent once a mined transaction spends them", async () => {
  const server = ZebraShapedServer.start({ network, initialBlocks: 3 });
  try {
    const rpc = utxoRpc({ chain: "zec", urls: [server.url] });
    const zec = utxoAdapters({
      chain: "zec",
      network,
      rpc,
      signer,
      settings: { confirmations: 1, fee: utxoFee("zec"), expiryWindow: 40 },
    });
    // The cold address: a key of the test mnemonic here, so that the test can spend from it as the cold wallet would.
    const cold = address(7);
    const a = server.deposit(cold, 3n * ZEC);
    const b = server.deposit(cold, 2n * ZEC);
    const other = server.deposit(address(8), ZEC);
    server.mine(1);
    const inMempool = server.deposit(cold, ZEC); // not mined: a mempool output counts for nothing
    const outpoint = (d: { txid: string; index: number }) => ({ txHash: d.txid, index: d.index });
    const asked = [outpoint(a), outpoint(b), outpoint(other), outpoint(inMempool)];
    assert.deepEqual(await zec.reader.unspent!(cold, asked), [true, true, false, false]);

    // The cold wallet spends `a`, mined: it no longer counts.
    const coin: PayoutCoin = {
      ...outpoint(a),
      amount: 3n * ZEC,
      address: cold,
      derivationIndex: 7,
      height: server.tipHeight,
    };
    const tx = await zec.payer.preparePayout({
      orderId: "cold-wallet",
      to: address(9),
      amount: ZEC,
      memo: null,
      coins: [coin],
    });
    await zec.payer.broadcast(tx);
    assert.deepEqual(await zec.reader.unspent!(cold, asked.slice(0, 2)), [true, true], "a spend in the mempool only");
    server.mine(1);
    assert.deepEqual(await zec.reader.unspent!(cold, asked.slice(0, 2)), [false, true]);
  } finally {
    await server.close();
  }
});
