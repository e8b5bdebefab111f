/**
 * The shared `UtxoPayer` (doge, zec): builds a payout from the coins the caller chose (kv/treasury.ts and
 * coin selection, with the same fee rule), signs it in the chain's three steps (tx.ts `UtxoTxFamily`: built unsigned,
 * each input's sighash, the signatures put in) through its signing port (a Signer in this process, or the signer
 * process, which recomputes each sighash from its own treasury records: docs/operations.md "Roles"), and returns it as
 * data to be recorded before it is sent (chains/adapter.ts). It never writes KV and never re-signs: `nudge` re-sends
 * the very bytes that were recorded.
 *
 * Outputs: the destination first (index 0), our change second (index 1) when the change is not dust
 * (chains/shared/utxo_fee.ts `payoutChange`), at the change key in effect (`changeIndex`: 0 until a rotation,
 * docs/operations.md "Rotating a hot wallet"). Keys: a coin at one of our change addresses is signed with the change
 * key at its `derivationIndex` (branch "change"); any other coin with the deposit key at its `derivationIndex`, after
 * checking that key's address is the coin's address: a coin we cannot prove ours is never signed for.
 */
import { outpointsOf, type PayoutCoin, type PreparedTx, type UtxoPayer, type UtxoPayoutRequest } from "../adapter.ts";
import type { UtxoChain } from "../catalog.ts";
import type { FeeFunction } from "../shared/coin_select.ts";
import { changeDustLimit, payoutChange } from "../shared/utxo_fee.ts";
import { decodeAddress, outputScript, p2pkhAddress, type UtxoNetwork } from "./network.ts";
import type { UtxoNode } from "./node.ts";
import { RpcError } from "./rpc.ts";
import type { UtxoSigningPort, UtxoTxFamily, UtxoTxOutput, UtxoTxPlan } from "./tx.ts";

/** The key that signs a coin of ours: by derivation index and branch, and its public key. */
interface CoinKey {
  index: number;
  branch: "deposit" | "change";
  publicKey: Uint8Array;
}

/** Where the change output sits in every payout. */
const CHANGE_OUTPUT = 1;

export interface UtxoSettings {
  /** Confirmations a transaction needs to count (the catalog's, or `<CHAIN>_CONFIRMATIONS`). */
  confirmations: number;
  /** The fee rule coin selection used: the payer builds with the same one (chains/shared/utxo_fee.ts). */
  fee: FeeFunction;
  /** zec: `nExpiryHeight` = tip + this many blocks (`ZEC_EXPIRY_WINDOW`, default the catalog's 40). */
  expiryWindow: number;
}

export interface UtxoPayerOptions {
  chain: UtxoChain;
  network: UtxoNetwork;
  node: UtxoNode;
  signer: UtxoSigningPort;
  settings: UtxoSettings;
  /** The chain's transaction steps (doge_tx.ts `DOGE_TX`, zec_tx.ts `ZEC_TX`). */
  family: UtxoTxFamily;
  /** The change key in effect (chains/derivation.ts `CHANGE_PARENT_PATHS`); 0 when unset. */
  changeIndex?: number;
}

export function utxoPayer(opts: UtxoPayerOptions): UtxoPayer & { readonly changeAddress: string } {
  const { chain, network, node, signer, settings, family } = opts;
  if (network.chain !== chain) throw new Error(`a ${network.chain} network cannot serve the ${chain} payer`);
  const changeIndex = opts.changeIndex ?? 0;
  const changeAddress = p2pkhAddress(network, signer.publicKey(chain, changeIndex, "change"));

  /** The key that signs `coin`, checked to be the coin's address's: a coin we cannot prove ours is never signed for. */
  async function keyFor(coin: PayoutCoin): Promise<CoinKey> {
    // Change coins carry the index of the change key that received them: this one's, or one rotated out before.
    const index = coin.derivationIndex;
    await signer.loadKey?.(chain, index, "change");
    const changeKey = signer.publicKey(chain, index, "change");
    const branch = p2pkhAddress(network, changeKey) === coin.address ? "change" : "deposit";
    if (branch === "deposit") await signer.loadKey?.(chain, index, "deposit");
    const publicKey = branch === "change" ? changeKey : signer.publicKey(chain, index, branch);
    const derived = p2pkhAddress(network, publicKey);
    if (derived !== coin.address) {
      throw new Error(
        `${chain}: coin ${coin.txHash}:${coin.index} is at ${coin.address}, but our ${branch} key ${index} is ` +
          `${derived}: refusing to sign a coin we cannot prove ours`,
      );
    }
    return { index, branch, publicKey };
  }

  /** Builds `plan` unsigned, has each input's sighash signed by its coin's key, and puts the signatures in. */
  async function sign(plan: UtxoTxPlan) {
    const unsigned = family.build(network, plan);
    const keys: CoinKey[] = [];
    for (const coin of plan.inputs) keys.push(await keyFor(coin));
    const spent = plan.inputs.map((c) => ({ amount: c.amount, script: outputScript(network, c.address) }));
    const digests = family.sighashes(network, unsigned, spent);
    const ders = await signer.signUtxoInputs(
      chain,
      unsigned,
      keys.map((k, i) => ({ index: k.index, branch: k.branch, digest: digests[i] })),
    );
    if (ders.length !== keys.length) throw new Error(`${chain}: the signer gave ${ders.length} signatures`);
    return family.assemble(network, unsigned, ders.map((der, i) => ({ der, publicKey: keys[i].publicKey })));
  }

  async function send(raw: string) {
    await node.send(raw);
  }

  return {
    chain,
    family: "utxo",
    changeAddress,
    changeIndex,
    atChangeIndex: (index: number) => utxoPayer({ ...opts, changeIndex: index }),

    async preparePayout(req: UtxoPayoutRequest): Promise<PreparedTx> {
      const coins = req.coins;
      if (coins.length === 0) throw new Error(`${chain} payout ${req.orderId}: no coins given to spend`);
      if (!decodeAddress(network, req.to)) {
        throw new Error(
          `${chain} payout ${req.orderId}: the destination ${req.to} is not a ${chain} ${network.name} ` +
            `transparent address (P2PKH or P2SH)`,
        );
      }
      // Dogecoin Core charges a whole kB's fee more for each output under its soft dust limit (0.01 DOGE) and
      // refuses outputs under the hard one: a payout output is never below the limit the change obeys.
      if (req.amount < changeDustLimit(chain)) {
        throw new Error(
          `${chain} payout ${req.orderId}: ${req.amount} is below the ${changeDustLimit(chain)} output dust limit`,
        );
      }
      const total = coins.reduce((sum, c) => sum + c.amount, 0n);
      const planned = payoutChange(chain, coins.length, total, req.amount, settings.fee);
      if (!planned) {
        throw new Error(
          `${chain} payout ${req.orderId}: ${coins.length} coin(s) holding ${total} cannot pay ${req.amount} ` +
            `and the fee`,
        );
      }
      const outputs: UtxoTxOutput[] = [{ address: req.to, amount: req.amount }];
      if (planned.change !== null) outputs.push({ address: changeAddress, amount: planned.change });
      const plan: UtxoTxPlan = { inputs: coins, outputs };
      let expiry: PreparedTx["expiry"];
      if (chain === "zec") {
        if (!node.nextBranchId) throw new Error("zec: the node cannot tell the consensus branch id");
        const tip = await node.tip();
        expiry = { kind: "height", value: tip.number + settings.expiryWindow };
        plan.expiryHeight = expiry.value;
        plan.branchId = await node.nextBranchId();
      }
      const signed = await sign(plan);
      const outpoints = outpointsOf(coins);
      return {
        txHash: signed.txid,
        raw: signed.raw,
        ...(expiry ? { expiry } : {}),
        consumes: { kind: "outpoints", outpoints, since: Math.min(...coins.map((c) => c.height)) },
        reservations: [{ kind: "coins", chain, outpoints }],
        fee: total - req.amount - (planned.change ?? 0n),
        ...(planned.change !== null
          ? {
            change: {
              index: CHANGE_OUTPUT,
              address: changeAddress,
              amount: planned.change,
              ...(changeIndex === 0 ? {} : { derivationIndex: changeIndex }),
            },
          }
          : {}),
      };
    },

    async broadcast(tx) {
      await send(tx.raw);
    },

    async nudge(tx) {
      // The recorded bytes again, never a new signature. A node refusing them (an input already spent by another
      // transaction, a conflict in its mempool) changes nothing: txStatus proves the payout dead or included.
      try {
        await send(tx.raw);
      } catch (err) {
        if (!(err instanceof RpcError)) throw err;
      }
    },
  };
}
