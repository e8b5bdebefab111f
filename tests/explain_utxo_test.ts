/**
 * Verify before record for the UTXO family (chains/utxo/explain.ts, chains/effects.ts): real payouts built and signed
 * by the real payer (chains/utxo/payer.ts) are decoded from their own bytes with the chains' libraries and compared
 * with what they were prepared for; a payer asked for something else than the intent (another amount, another
 * destination, change to a stranger, a coin not given, a fee above the rule) is caught by `differences`; bytes the
 * payer never builds are refused by the decoder.
 *
 * The same cases run against:
 * - doge regtest on litecoind (Bitcoin Core family, standing in for Dogecoin Core; tests/support/litecoind.ts skips
 *   loudly without it and fails under CI=true): coins are real deposits, and the node's mempool accepts the payouts;
 * - doge mainnet (D/A addresses) with the payer's node a Bitcoin-Core-shaped local server that is never asked (a doge
 *   payout needs no node): coins are made up, signing needs none to exist;
 * - zec regtest and mainnet on the Zebra-shaped RPC server (tests/support/zebra_rpc_server.ts; no Zebra runs on this
 *   machine kind): coins are deposits on it, its mempool checks the payouts as Zebra's would.
 */
import assert from "node:assert/strict";
import * as utxolib from "@bitgo/utxo-lib";
import { payments, script as bscript, Transaction } from "bitcoinjs-lib";
import type { PayoutCoin, PreparedTx, UtxoPayer } from "../chains/adapter.ts";
import { bitcoinBase58check } from "../chains/shared/base58check.ts";
import type { UtxoChain } from "../chains/catalog.ts";
import { differences, type TxEffects, type TxIntent } from "../chains/effects.ts";
import type { FeeFunction } from "../chains/shared/coin_select.ts";
import { changeDustLimit, utxoFee } from "../chains/shared/utxo_fee.ts";
import { Signer } from "../chains/signer.ts";
import { explainUtxoTx } from "../chains/utxo/explain.ts";
import { utxoAdapters, type UtxoSettings } from "../chains/utxo/index.ts";
import { p2pkhAddress, type UtxoNetwork, utxoNetwork } from "../chains/utxo/network.ts";
import { utxoRpc } from "../chains/utxo/rpc.ts";
import { fromHex, parseZecV5, toHex } from "../chains/utxo/zec_zip244.ts";
import { startBitcoinCoreServer } from "./support/bitcoin_core_server.ts";
import { DOGE_REGTEST, dogeOnLitecoind, TEST_MNEMONIC } from "./support/doge_regtest.ts";
import { litecoindAvailable, startLitecoind } from "./support/litecoind.ts";
import { VECTORS_ABSENT, zcashVectors } from "./support/zcash_vectors.ts";
import { ZebraShapedServer } from "./support/zebra_rpc_server.ts";

const COIN = 100_000_000n;
const ours = Signer.fromMnemonic(TEST_MNEMONIC);
/** Not ours: a key of another (public, test-only) mnemonic. */
const strangers = Signer.fromMnemonic("legal winner thank year wave sausage worth useful legal winner thank yellow");

/** One chain and network's real payers and coins, for the shared cases below. */
interface Family {
  chain: UtxoChain;
  network: UtxoNetwork;
  settings: UtxoSettings;
  /** Our payer. */
  payer: UtxoPayer;
  /** The same keys, but a fee rule ten times the chain's: a payer that overpays. */
  costly: UtxoPayer;
  /** A payer of someone else's keys: its change goes to its own change address, not ours. */
  stranger: UtxoPayer;
  /** A fresh coin of ours (a deposit at our address `index`), and one of the stranger's. */
  coin(index: number, amount: bigint): Promise<PayoutCoin>;
  strangerCoin(index: number, amount: bigint): Promise<PayoutCoin>;
  /** A P2PKH and a P2SH destination that are not ours. */
  dest: string;
  p2shDest: string;
  /** The expiry height a payout prepared now commits to (zec: tip + window), or undefined (doge has none). */
  expectedExpiry(): Promise<number | undefined>;
  /** The chain (or its stand-in) takes the very bytes; a no-op where no node runs. */
  accept(tx: PreparedTx): Promise<void>;
}

const outpoint = (c: PayoutCoin) => ({ txHash: c.txHash, index: c.index });
const given = (coins: PayoutCoin[]) => coins.map((c) => ({ txHash: c.txHash, index: c.index, amount: c.amount }));

function intentOf(
  f: Family,
  to: string,
  amount: bigint,
  coins: PayoutCoin[],
  outputs: number,
): Extract<TxIntent, { kind: "payout" }> {
  return {
    kind: "payout",
    chain: f.chain,
    to,
    amount,
    memo: null,
    coins: given(coins),
    changeAddress: f.payer.changeAddress!,
    maxFee: f.settings.fee(coins.length, outputs),
  };
}

/** Field by field: a UTXO payout's effects carry inputs, outputs, a null memo, zec's expiry, and nothing else. */
function assertEffects(
  effects: TxEffects,
  chain: UtxoChain,
  coins: PayoutCoin[],
  outputs: { to: string; amount: bigint }[],
  expiry: number | undefined,
) {
  assert.equal(effects.chain, chain);
  assert.deepEqual(effects.inputs, coins.map(outpoint), "inputs: the coins' outpoints, txids in display order");
  assert.deepEqual(effects.outputs, outputs, "outputs in vout order");
  assert.equal(effects.memo, null);
  assert.deepEqual(effects.expiry, expiry === undefined ? undefined : { kind: "height", value: expiry });
  for (const absent of ["from", "call", "chainId", "nonce", "maxFee"] as const) {
    assert.equal(effects[absent], undefined, `${absent}: not carried by UTXO bytes`);
  }
}

const id = (c: PayoutCoin) => `${c.txHash}:${c.index}`;

async function runCases(t: Deno.TestContext, f: Family) {
  let next = 0;
  const fresh = (amount: bigint) => f.coin(next++, amount);
  const req = (to: string, amount: bigint, coins: PayoutCoin[]) => ({
    orderId: `o${next++}`,
    to,
    amount,
    memo: null,
    coins,
  });
  const fee = f.settings.fee;

  await t.step("a payout with change: destination first, our change second", async () => {
    const coin = await fresh(5n * COIN);
    const expiry = await f.expectedExpiry();
    const tx = await f.payer.preparePayout(req(f.dest, 2n * COIN, [coin]));
    const effects = await explainUtxoTx(tx.raw, f.network);
    const change = 3n * COIN - fee(1, 2);
    assertEffects(effects, f.chain, [coin], [
      { to: f.dest, amount: 2n * COIN },
      { to: f.payer.changeAddress!, amount: change },
    ], expiry);
    assert.deepEqual(effects.expiry, tx.expiry, "the expiry the payer records is the one the bytes carry");
    assert.deepEqual(differences(intentOf(f, f.dest, 2n * COIN, [coin], 2), effects, tx), []);
    await f.accept(tx);
  });

  await t.step("a payout without change, to a P2SH destination: one output, the fee exactly the rule's", async () => {
    const amount = 2n * COIN;
    const coin = await fresh(amount + fee(1, 1));
    const expiry = await f.expectedExpiry();
    const tx = await f.payer.preparePayout(req(f.p2shDest, amount, [coin]));
    assert.equal(tx.change, undefined);
    const effects = await explainUtxoTx(tx.raw, f.network);
    assertEffects(effects, f.chain, [coin], [{ to: f.p2shDest, amount }], expiry);
    assert.deepEqual(differences(intentOf(f, f.p2shDest, amount, [coin], 1), effects, tx), []);
    await f.accept(tx);
  });

  await t.step("a consolidation: two coins to our change address, one output", async () => {
    const coins = [await fresh(COIN), await fresh(2n * COIN)];
    const amount = 3n * COIN - fee(2, 1);
    const expiry = await f.expectedExpiry();
    const tx = await f.payer.preparePayout(req(f.payer.changeAddress!, amount, coins));
    const effects = await explainUtxoTx(tx.raw, f.network);
    assertEffects(effects, f.chain, coins, [{ to: f.payer.changeAddress!, amount }], expiry);
    const intent = intentOf(f, f.payer.changeAddress!, amount, coins, 1);
    assert.deepEqual(differences(intent, effects, tx), []);
    assert.deepEqual(differences(intent, effects, tx), []);
    await f.accept(tx);
  });

  await t.step("a payout whose leftover is under the dust limit: no change, the leftover is fee", async () => {
    // payoutChange (chains/shared/utxo_fee.ts) drops change below the dust limit into the fee: such a payout pays up
    // to the two-output fee plus the dust limit less one, so that is the least maxFee a caller may give it.
    const amount = 2n * COIN;
    const leftover = fee(1, 2) - fee(1, 1) + changeDustLimit(f.chain) - 1n;
    const coin = await fresh(amount + fee(1, 1) + leftover);
    const tx = await f.payer.preparePayout(req(f.dest, amount, [coin]));
    assert.equal(tx.change, undefined);
    const effects = await explainUtxoTx(tx.raw, f.network);
    assert.deepEqual(effects.outputs, [{ to: f.dest, amount }]);
    const intent = intentOf(f, f.dest, amount, [coin], 1);
    assert.deepEqual(differences({ ...intent, maxFee: fee(1, 2) + changeDustLimit(f.chain) - 1n }, effects, tx), []);
    assert.deepEqual(differences(intent, effects, tx), [
      `pays ${fee(1, 1) + leftover} in fee, above the ${fee(1, 1)} its size allows`,
    ]);
    await f.accept(tx);
  });

  await t.step("tamper: a consolidation that pays a stranger (its outputs must all be ours)", async () => {
    const coins = [await fresh(COIN), await fresh(2n * COIN)];
    const amount = 3n * COIN - fee(2, 1);
    const tx = await f.payer.preparePayout(req(f.dest, amount, coins));
    const effects = await explainUtxoTx(tx.raw, f.network);
    const intent = intentOf(f, f.payer.changeAddress!, amount, coins, 1);
    // A consolidation pays our change address only (chains/effects.ts).
    assert.deepEqual(differences(intent, effects, tx), [
      `consolidation output 0 pays ${amount} to ${f.dest}, not our change address`,
      `consolidates nothing into our change address, not ${amount}`,
    ]);
    // Consolidating another amount (the rest to the fee, and no maxFee given) is named too.
    const less = await f.payer.preparePayout(req(f.payer.changeAddress!, amount - 1n, coins));
    const lessEffects = await explainUtxoTx(less.raw, f.network);
    assert.deepEqual(differences({ ...intent, maxFee: undefined }, lessEffects, less), [
      `consolidates ${amount - 1n} into our change address, not ${amount}`,
    ]);
  });

  await t.step("tamper: the payer asked for another amount", async () => {
    const coin = await fresh(5n * COIN);
    const tx = await f.payer.preparePayout(req(f.dest, 2n * COIN + 1n, [coin]));
    const effects = await explainUtxoTx(tx.raw, f.network);
    assert.deepEqual(differences(intentOf(f, f.dest, 2n * COIN, [coin], 2), effects, tx), [
      `pays ${f.dest} ${2n * COIN + 1n}, not ${2n * COIN}`,
    ]);
  });

  await t.step("tamper: the payer asked for another destination", async () => {
    const coin = await fresh(5n * COIN);
    const tx = await f.payer.preparePayout(req(f.p2shDest, 2n * COIN, [coin]));
    const effects = await explainUtxoTx(tx.raw, f.network);
    assert.deepEqual(differences(intentOf(f, f.dest, 2n * COIN, [coin], 2), effects, tx), [
      `pays ${f.dest} in 0 outputs, not 1`,
      `output 0 pays ${2n * COIN} to ${f.p2shDest}, not our change address`,
    ]);
  });

  await t.step("tamper: change to a stranger (a payer whose change address is not ours)", async () => {
    const coin = await f.strangerCoin(next++, 5n * COIN);
    const tx = await f.stranger.preparePayout(req(f.dest, 2n * COIN, [coin]));
    assert.notEqual(f.stranger.changeAddress, f.payer.changeAddress);
    const effects = await explainUtxoTx(tx.raw, f.network);
    assert.deepEqual(effects.outputs[1], { to: f.stranger.changeAddress, amount: 3n * COIN - fee(1, 2) });
    assert.deepEqual(differences(intentOf(f, f.dest, 2n * COIN, [coin], 2), effects, tx), [
      `output 1 pays ${3n * COIN - fee(1, 2)} to ${f.stranger.changeAddress}, not our change address`,
      // The payer recorded that output as its change: none of the outputs is change to our address.
      "the change recorded with it is not among its outputs",
    ]);
  });

  await t.step("tamper: it spends a coin it was not given, or leaves out one it was", async () => {
    const coins = [await fresh(2n * COIN), await fresh(2n * COIN)];
    const both = await f.payer.preparePayout(req(f.dest, 3n * COIN, coins));
    const one = await f.payer.preparePayout(req(f.dest, COIN, [coins[0]]));
    const spendsBoth = await explainUtxoTx(both.raw, f.network);
    const spendsOne = await explainUtxoTx(one.raw, f.network);
    assert.deepEqual(differences(intentOf(f, f.dest, 3n * COIN, [coins[0]], 2), spendsBoth, both), [
      `spends coins it was not given: ${id(coins[1])}`,
      // What it pays is more than the one coin it was given holds: said too.
      `outputs ${4n * COIN - fee(2, 2)} exceed the ${2n * COIN} its coins hold`,
    ]);
    assert.deepEqual(differences(intentOf(f, f.dest, COIN, coins, 2), spendsOne, one), [
      `does not spend coins it was given: ${id(coins[1])}`,
      // The coin left out is counted as fee: far above what the rule allows.
      `pays ${2n * COIN + fee(1, 2)} in fee, above the ${fee(2, 2)} its size allows`,
    ]);
  });

  await t.step("tamper: a fee above the rule's (a payer with another fee rate)", async () => {
    const coin = await fresh(5n * COIN);
    const tx = await f.costly.preparePayout(req(f.dest, 2n * COIN, [coin]));
    const effects = await explainUtxoTx(tx.raw, f.network);
    assert.deepEqual(differences(intentOf(f, f.dest, 2n * COIN, [coin], 2), effects, tx), [
      `pays ${10n * fee(1, 2)} in fee, above the ${fee(1, 2)} its size allows`,
    ]);
  });

  await t.step("refused: garbage, truncated bytes, and the other UTXO chain's transaction", async () => {
    const coin = await fresh(5n * COIN);
    const tx = await f.payer.preparePayout(req(f.dest, 2n * COIN, [coin]));
    for (const raw of ["", "zz", "0x" + tx.raw, "deadbeef", tx.raw.slice(0, -2), tx.raw + "00"]) {
      await assert.rejects(explainUtxoTx(raw, f.network), new RegExp(`^Error: ${f.chain}: `), JSON.stringify(raw));
    }
    const other = utxoNetwork(f.chain === "doge" ? "zec" : "doge", f.network.name);
    await assert.rejects(explainUtxoTx(tx.raw, other), /cannot explain the transaction/);
  });
}

/** The doge refusals: a real payout's bytes, changed with bitcoinjs-lib into what the payer never builds. */
async function dogeRefusals(t: Deno.TestContext, f: Family) {
  const coin = await f.coin(900, 5n * COIN);
  const tx = await f.payer.preparePayout({ orderId: "r", to: f.dest, amount: COIN, memo: null, coins: [coin] });
  const changed = (edit: (tx: Transaction) => void) => {
    const copy = Transaction.fromHex(tx.raw);
    edit(copy);
    return copy.toHex();
  };
  const cases: [string, string, RegExp][] = [
    [
      "an OP_RETURN output",
      changed((x) => x.addOutput(bscript.compile([bscript.OPS.OP_RETURN, Uint8Array.of(1, 2, 3)]), 0n)),
      /doge: output 2 has a script that is neither P2PKH nor P2SH \(6a03010203\); the payer never builds one/,
    ],
    [
      "a witness program output",
      changed((x) => x.addOutput(payments.p2wpkh({ hash: new Uint8Array(20).fill(7) }).output!, 1_000_000n)),
      /doge: output 2 has a script that is neither P2PKH nor P2SH \(00140707/,
    ],
    [
      "witness data",
      changed((x) => x.setWitness(0, [Uint8Array.of(1)])),
      /doge: .*witness data; Dogecoin has no segwit/,
    ],
    ["a lock time", changed((x) => (x.locktime = 500)), /doge: the transaction has lock time 500; the payer sets none/],
    ["another version", changed((x) => (x.version = 2)), /doge: transaction version 2; the payer builds version 1/],
    ["a non-final input", changed((x) => (x.ins[0].sequence = 0)), /doge: input 0 has sequence 0x0/],
    ["an unsigned input", changed((x) => x.setInputScript(0, new Uint8Array())), /doge: input 0 is not a signed P2PKH/],
    [
      "a SIGHASH_NONE signature",
      changed((x) => x.setInputScript(0, withHashType(x.ins[0].script, 0x02))),
      /doge: input 0 is signed with hash type 0x2, not SIGHASH_ALL/,
    ],
    [
      "a SIGHASH_ALL|ANYONECANPAY signature",
      changed((x) => x.setInputScript(0, withHashType(x.ins[0].script, 0x81))),
      /doge: input 0 is signed with hash type 0x81, not SIGHASH_ALL/,
    ],
  ];
  for (const [what, raw, error] of cases) {
    await t.step(`refused: ${what}`, async () => {
      await assert.rejects(explainUtxoTx(raw, f.network), error);
    });
  }
}

/** The zec refusals: a real payout's bytes, changed with @bitgo/utxo-lib into what the payer never builds. */
async function zecRefusals(t: Deno.TestContext, f: Family) {
  const coin = await f.coin(900, 5n * COIN);
  const tx = await f.payer.preparePayout({ orderId: "r", to: f.dest, amount: COIN, memo: null, coins: [coin] });
  const lib = f.network.name === "mainnet" ? utxolib.networks.zcash : utxolib.networks.zcashTest;
  const changed = (edit: (tx: utxolib.bitgo.ZcashTransaction<bigint>) => void) => {
    const copy = utxolib.bitgo.ZcashTransaction.fromBuffer<bigint>(Buffer.from(fromHex(tx.raw)), false, "bigint", lib);
    edit(copy);
    return toHex(copy.toBuffer());
  };
  const cases: [string, string, RegExp][] = [
    [
      "an OP_RETURN output",
      changed((x) => {
        x.outs.push({ script: Buffer.from([0x6a, 3, 1, 2, 3]), value: 0n });
      }),
      /zec: output 2 has a script that is neither P2PKH nor P2SH \(6a03010203\); the payer never builds one/,
    ],
    ["no expiry height", changed((x) => (x.expiryHeight = 0)), /zec: the transaction has no expiry height/],
    ["a lock time", changed((x) => (x.locktime = 500)), /zec: the transaction has lock time 500/],
    ["a non-final input", changed((x) => (x.ins[0].sequence = 0)), /zec: input 0 has sequence 0x0/],
    ["an unsigned input", changed((x) => (x.ins[0].script = Buffer.alloc(0))), /zec: input 0 is not a signed P2PKH/],
    [
      "a SIGHASH_SINGLE signature",
      changed((x) => (x.ins[0].script = Buffer.from(withHashType(x.ins[0].script, 0x03)))),
      /zec: input 0 is signed with hash type 0x3, not SIGHASH_ALL/,
    ],
    [
      "a v4 transaction",
      toHex(Uint8Array.of(0x04, 0, 0, 0x80, ...fromHex(tx.raw).subarray(4))),
      /zec: cannot explain the transaction: not a v5 transaction/,
    ],
  ];
  for (const [what, raw, error] of cases) {
    await t.step(`refused: ${what}`, async () => {
      await assert.rejects(explainUtxoTx(raw, f.network), error);
    });
  }
}

/** A P2PKH scriptSig whose signature carries another sighash type byte. */
function withHashType(scriptSig: Uint8Array, hashType: number): Uint8Array {
  const [sig, pub] = bscript.decompile(scriptSig) as Uint8Array[];
  return bscript.compile([Uint8Array.of(...sig.subarray(0, -1), hashType), pub]);
}

/** A P2SH address of `network` that is not ours (a made-up script hash). */
const p2shOf = (network: UtxoNetwork, fill: number) =>
  bitcoinBase58check.encode(Uint8Array.of(...network.p2sh, ...new Uint8Array(20).fill(fill)));

// --- doge regtest on litecoind ---------------------------------------------------------------------------------------

const LITECOIND = litecoindAvailable("tests/explain_utxo_test.ts");

Deno.test({
  name: "explain doge payouts on litecoind regtest (Bitcoin Core family, standing in for Dogecoin Core)",
  ignore: !LITECOIND,
}, async (t) => {
  const node = await startLitecoind();
  try {
    const doge = dogeOnLitecoind(node, { confirmations: 1 });
    const with_ = (signer: Signer, fee: FeeFunction = doge.settings.fee) =>
      utxoAdapters({ chain: "doge", network: DOGE_REGTEST, rpc: doge.rpc, signer, settings: { ...doge.settings, fee } })
        .payer;
    const stranger = with_(strangers);
    const family: Family = {
      chain: "doge",
      network: DOGE_REGTEST,
      settings: doge.settings,
      payer: doge.payer,
      costly: with_(ours, utxoFee("doge", { dogeSatsPerKb: 10_000_000n })),
      stranger,
      coin: (index, amount) => doge.depositCoin(index, amount),
      async strangerCoin(index, amount) {
        const address = p2pkhAddress(DOGE_REGTEST, strangers.publicKey("doge", index));
        const txHash = await node.send(address, amount);
        await node.mine(1);
        const out = (await doge.reader.transfersOf(txHash))!.find((x) => x.to === address)!;
        return { txHash, index: out.index, amount, address, derivationIndex: index, height: 0 };
      },
      dest: await node.call<string>("getnewaddress", ["", "legacy"]),
      p2shDest: p2shOf(DOGE_REGTEST, 0x33),
      expectedExpiry: () => Promise.resolve(undefined),
      async accept(tx) {
        const [result] = await node.call<{ allowed: boolean; txid: string }[]>("testmempoolaccept", [[tx.raw]]);
        assert.equal(result.allowed, true, JSON.stringify(result));
        assert.equal(result.txid, tx.txHash);
      },
    };
    assert.ok(/^[mn]/.test(family.dest) && family.p2shDest.startsWith("2"), "regtest addresses");
    await runCases(t, family);
    await dogeRefusals(t, family);
  } finally {
    await node.stop();
  }
});

// --- doge mainnet, made-up coins (a doge payout asks its node nothing) -----------------------------------------------

Deno.test("explain doge mainnet payouts (the payer's node a Bitcoin-Core-shaped local server, never asked)", async (t) => {
  const server = startBitcoinCoreServer({ chain: "main" });
  try {
    const network = utxoNetwork("doge", "mainnet");
    const settings: UtxoSettings = { confirmations: 1, fee: utxoFee("doge"), expiryWindow: 40 };
    const rpc = utxoRpc({ chain: "doge", urls: [server.url] });
    const with_ = (signer: Signer, fee: FeeFunction = settings.fee) =>
      utxoAdapters({ chain: "doge", network, rpc, signer, settings: { ...settings, fee } }).payer;
    let made = 0;
    const madeUp = (signer: Signer) => (index: number, amount: bigint): Promise<PayoutCoin> => {
      const txHash = toHex(Uint8Array.from({ length: 32 }, (_, i) => (i * 31 + ++made) & 0xff));
      const address = p2pkhAddress(network, signer.publicKey("doge", index));
      return Promise.resolve({ txHash, index: made % 3, amount, address, derivationIndex: index, height: 1 });
    };
    const family: Family = {
      chain: "doge",
      network,
      settings,
      payer: with_(ours),
      costly: with_(ours, utxoFee("doge", { dogeSatsPerKb: 10_000_000n })),
      stranger: with_(strangers),
      coin: madeUp(ours),
      strangerCoin: madeUp(strangers),
      dest: p2pkhAddress(network, strangers.publicKey("doge", 77)),
      p2shDest: p2shOf(network, 0x44),
      expectedExpiry: () => Promise.resolve(undefined),
      accept: () => Promise.resolve(),
    };
    assert.ok(family.dest.startsWith("D") && /^[9A]/.test(family.p2shDest), "mainnet addresses");
    await runCases(t, family);
    await dogeRefusals(t, family);
    assert.deepEqual(server.calls, [], "a doge payout is built without asking the node");
  } finally {
    await server.close();
  }
});

// --- zec on the Zebra-shaped RPC server ------------------------------------------------------------------------------

for (const name of ["regtest", "mainnet"] as const) {
  Deno.test(`explain zec ${name} payouts on a Zebra-shaped RPC server (no Zebra runs here)`, async (t) => {
    const network = utxoNetwork("zec", name);
    const server = ZebraShapedServer.start({ network, initialBlocks: 5 });
    try {
      const settings: UtxoSettings = { confirmations: 1, fee: utxoFee("zec"), expiryWindow: 10 };
      const rpc = utxoRpc({ chain: "zec", urls: [server.url] });
      const with_ = (signer: Signer, fee: FeeFunction = settings.fee) =>
        utxoAdapters({ chain: "zec", network, rpc, signer, settings: { ...settings, fee } }).payer;
      const depositTo = (signer: Signer) => (index: number, amount: bigint): Promise<PayoutCoin> => {
        const address = p2pkhAddress(network, signer.publicKey("zec", index));
        const { txid, index: n } = server.deposit(address, amount);
        server.mine(1);
        return Promise.resolve({
          txHash: txid,
          index: n,
          amount,
          address,
          derivationIndex: index,
          height: server.tipHeight,
        });
      };
      const family: Family = {
        chain: "zec",
        network,
        settings,
        payer: with_(ours),
        costly: with_(ours, (i, o) => 10n * settings.fee(i, o)),
        stranger: with_(strangers),
        coin: depositTo(ours),
        strangerCoin: depositTo(strangers),
        dest: p2pkhAddress(network, strangers.publicKey("zec", 77)),
        p2shDest: p2shOf(network, 0x55),
        expectedExpiry: () => Promise.resolve(server.tipHeight + settings.expiryWindow),
        async accept(tx) {
          await with_(ours).broadcast(tx);
          assert.ok(server.mempool.has(tx.txHash), "the Zebra-shaped mempool took it (signatures, fee, expiry)");
        },
      };
      const [p2pkh, p2sh] = name === "mainnet" ? ["t1", "t3"] : ["tm", "t2"];
      assert.ok(family.dest.startsWith(p2pkh) && family.p2shDest.startsWith(p2sh), `${name} addresses`);
      assert.ok(family.payer.changeAddress!.startsWith(p2pkh));
      await runCases(t, family);
      await zecRefusals(t, family);
    } finally {
      await server.close();
    }
  });
}

// --- zec: shielded parts (official ZIP-244 vectors) ------------------------------------------------------------------

const zip244 = zcashVectors("zip_0244.json");
if (!zip244) console.warn(VECTORS_ABSENT);
Deno.test({
  name: "explain zec refuses v5 transactions with Sapling or Orchard parts (official ZIP-244 vectors)",
  ignore: !zip244,
  async fn() {
    let shielded = 0;
    for (const v of zip244!) {
      const raw = v.tx as string;
      const tx = parseZecV5(fromHex(raw));
      if (tx.sapling.spends.length + tx.sapling.outputs.length + (tx.orchard?.actions.length ?? 0) === 0) continue;
      shielded++;
      await assert.rejects(
        explainUtxoTx(raw, utxoNetwork("zec", "mainnet")),
        /zec: the transaction has shielded parts .*; the payer builds transparent-only transactions/,
      );
    }
    assert.ok(shielded > 0, "the vectors have shielded transactions");
  },
});
