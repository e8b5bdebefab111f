/**
 * Verify before record, Sui (chains/effects.ts): what a signed Sui transaction does, read from its own bytes with
 * @mysten/sui's BCS schema of `TransactionData` and its signature verifier, never with the payer that built it.
 *
 * The payer (chains/sui/payer.ts) builds two programmable transactions, and nothing else is understood here:
 * - a payout: `SplitCoins(GasCoin, [u64])` then `TransferObjects([that coin], address)`, from the hot wallet;
 * - a sweep: `TransferObjects([GasCoin], address)`, the deposit address's every coin merged into the gas coin.
 * Any other command (a Move call, merge, publish, upgrade, vector), an object or funds-withdrawal input, a sponsored
 * gas owner, a missing epoch expiration or a signature that is not the sender's ed25519 key is refused: an unknown
 * command could move value we never asked to move.
 */
import { bcs, type BcsType } from "@mysten/sui/bcs";
import { parseSerializedSignature } from "@mysten/sui/cryptography";
import { verifyTransactionSignature } from "@mysten/sui/verify";
import { base64 } from "@scure/base";
import type { Outpoint } from "../adapter.ts";
import type { TxEffects, TxOutput } from "../effects.ts";
import { decodeSuiRaw } from "./payer.ts";

type TransactionData = ReturnType<typeof bcs.TransactionData.parse>;
type Programmable = NonNullable<TransactionData["V1"]["kind"]["ProgrammableTransaction"]>;
type Argument = NonNullable<Programmable["commands"][number]["TransferObjects"]>["address"];

/**
 * What the signed Sui transaction in `raw` (a `PreparedTx.raw` of chains/sui/payer.ts: JSON of base64 bytes and a
 * serialized signature) does. Throws when the bytes do not decode, carry anything the payer never builds, or are not
 * signed by the sender's own key.
 *
 * - `from`: the sender (also the gas owner: a sponsored transaction is refused).
 * - `outputs`: one per coin transferred, in command order. A split coin carries its u64 amount. The whole gas coin (a
 *   sweep) carries `0n`: its value is the balance of the gas payment coins less the gas charged, which the bytes do
 *   not say (they name the coins by object reference, not by balance). `differences` does not compare a sweep's
 *   amount; a payout built as a whole-gas-coin transfer reads "pays 0, not N" and is refused.
 * - `inputs`: the gas payment coins as outpoints (object id as `txHash`, version as `index`), the same form as the
 *   payer's `consumes` and coin reservations, so the caller can check that what is locked is what is spent.
 * - `memo`: null, a Sui transfer carries none. `nonce`: absent, Sui has none (the gas coin versions play its part).
 * - `expiry`: the expiration epoch. `maxFee`: the gas budget, which Sui states in MIST already (the most the sender
 *   is charged, whatever the gas price), so it is not multiplied by the price.
 */
export async function explainSuiTx(raw: string): Promise<TxEffects> {
  const signed = decodeSuiRaw(raw);
  let bytes: Uint8Array;
  try {
    bytes = base64.decode(signed.bytes);
  } catch {
    throw new Error("Sui transaction refused: its `bytes` are not base64");
  }
  const data = parseTransactionData(bytes);
  const tx = data.V1;
  const sender = tx.sender;
  await verifySender(bytes, signed.signature, sender);

  const programmable = tx.kind.ProgrammableTransaction;
  if (tx.kind.$kind !== "ProgrammableTransaction" || !programmable) {
    throw new Error(`Sui transaction refused: a ${tx.kind.$kind} transaction, not a programmable one we build`);
  }
  if (tx.gasData.owner !== sender) {
    throw new Error(`Sui transaction refused: gas paid by ${tx.gasData.owner}, not its sender ${sender} (sponsored)`);
  }
  if (tx.gasData.payment.length === 0) throw new Error("Sui transaction refused: it names no gas payment coin");
  if (tx.expiration.$kind !== "Epoch" || tx.expiration.Epoch === undefined) {
    // The payer always sets one: without it a lost transaction could never be proven dead (docs/architecture.md "Where
    // native coins live": a sui transaction is dead once its epoch expired and its digest is unknown).
    throw new Error(`Sui transaction refused: expiration ${tx.expiration.$kind}, not an epoch`);
  }
  const epoch = Number(tx.expiration.Epoch);
  if (!Number.isSafeInteger(epoch)) throw new Error(`Sui transaction refused: expiration epoch ${epoch}`);

  const inputs: Outpoint[] = tx.gasData.payment.map((coin) => {
    // The form of the payer's `consumes` and coin reservations, written out here rather than imported from it.
    const outpoint = { txHash: coin.objectId, index: Number(coin.version) };
    if (!Number.isSafeInteger(outpoint.index)) {
      throw new Error(`Sui transaction refused: gas coin ${coin.objectId} version ${coin.version} is out of range`);
    }
    return outpoint;
  });

  return {
    chain: "sui",
    from: sender,
    inputs,
    outputs: transfers(programmable),
    memo: null,
    expiry: { kind: "epoch", value: epoch },
    maxFee: BigInt(tx.gasData.budget),
  };
}

function parseTransactionData(bytes: Uint8Array): TransactionData {
  let data: TransactionData;
  try {
    data = bcs.TransactionData.parse(bytes);
  } catch (err) {
    throw new Error(`Sui transaction refused: its bytes are not Sui TransactionData (${(err as Error).message})`);
  }
  // BCS parsing stops where the value ends: bytes after it (or a non-canonical encoding) are refused, so what was
  // signed is exactly what was decoded.
  const again = bcs.TransactionData.serialize(data).toBytes();
  if (again.length !== bytes.length || again.some((b, i) => b !== bytes[i])) {
    throw new Error("Sui transaction refused: its bytes are not exactly one canonical TransactionData");
  }
  if (data.$kind !== "V1" || !data.V1) throw new Error(`Sui transaction refused: TransactionData ${data.$kind}`);
  return data;
}

/** The signature must be an ed25519 signature (the only scheme the signer makes) by the sender's own key. */
async function verifySender(bytes: Uint8Array, signature: string, sender: string): Promise<void> {
  let scheme: string;
  try {
    scheme = parseSerializedSignature(signature).signatureScheme;
  } catch (err) {
    throw new Error(`Sui transaction refused: its signature does not decode (${(err as Error).message})`);
  }
  if (scheme !== "ED25519") throw new Error(`Sui transaction refused: a ${scheme} signature, not ED25519`);
  try {
    await verifyTransactionSignature(bytes, signature, { address: sender });
  } catch (err) {
    throw new Error(
      `Sui transaction refused: its signature is not by the sender ${sender}'s key (${(err as Error).message})`,
    );
  }
}

/**
 * The coins the commands transfer, in order. A coin split from the gas coin is moved exactly once; the gas coin
 * itself is transferred only alone, as the one command of a sweep.
 */
function transfers(ptb: Programmable): TxOutput[] {
  const { inputs, commands } = ptb;
  for (const [i, input] of inputs.entries()) {
    if (input.$kind !== "Pure") throw new Error(`Sui transaction refused: input ${i} is ${input.$kind}, not pure`);
  }
  const pure = (arg: Argument, what: string): Uint8Array => {
    if (arg.$kind !== "Input" || arg.Input === undefined || !inputs[arg.Input]?.Pure) {
      throw new Error(`Sui transaction refused: ${what} is ${JSON.stringify(arg)}, not a pure input`);
    }
    return base64.decode(inputs[arg.Input].Pure!.bytes);
  };
  // Split coins by command index: their amounts, and whether each was transferred yet.
  const splits = new Map<number, { amount: bigint; moved: boolean }[]>();
  const outputs: TxOutput[] = [];
  for (const [index, command] of commands.entries()) {
    if (command.$kind === "SplitCoins" && command.SplitCoins) {
      if (command.SplitCoins.coin.$kind !== "GasCoin") {
        throw new Error(`Sui transaction refused: command ${index} splits a coin other than the gas coin`);
      }
      if (command.SplitCoins.amounts.length === 0) {
        throw new Error(`Sui transaction refused: command ${index} splits no amount`);
      }
      splits.set(
        index,
        command.SplitCoins.amounts.map((a, j) => ({
          amount: BigInt(exact(bcs.u64(), pure(a, `amount ${j} of command ${index}`), "u64 amount")),
          moved: false,
        })),
      );
    } else if (command.$kind === "TransferObjects" && command.TransferObjects) {
      const { objects, address } = command.TransferObjects;
      const to = exact(bcs.Address, pure(address, `the recipient of command ${index}`), "address");
      if (objects.length === 0) throw new Error(`Sui transaction refused: command ${index} transfers nothing`);
      for (const object of objects) {
        if (object.$kind === "GasCoin") {
          if (commands.length !== 1 || objects.length !== 1) {
            throw new Error(
              "Sui transaction refused: it transfers the gas coin alongside other commands or coins (we only " +
                "transfer the whole gas coin alone, in a sweep)",
            );
          }
          outputs.push({ to, amount: 0n });
          continue;
        }
        const [from, j] = object.$kind === "NestedResult" && object.NestedResult
          ? object.NestedResult
          : object.$kind === "Result" && object.Result !== undefined
          ? [object.Result, 0]
          : [-1, -1];
        const split = splits.get(from);
        // `Result(i)` names a command's only result: a split of several coins has none.
        if (!split || !split[j] || (object.$kind === "Result" && split.length !== 1)) {
          throw new Error(
            `Sui transaction refused: command ${index} transfers ${JSON.stringify(object)}, not a coin split ` +
              "earlier from the gas coin",
          );
        }
        if (split[j].moved) throw new Error(`Sui transaction refused: command ${index} transfers a coin twice`);
        split[j].moved = true;
        outputs.push({ to, amount: split[j].amount });
      }
    } else {
      throw new Error(
        `Sui transaction refused: command ${index} is ${command.$kind}, which we never build (only SplitCoins ` +
          "from the gas coin and TransferObjects)",
      );
    }
  }
  for (const [index, split] of splits) {
    if (split.some((c) => !c.moved)) {
      throw new Error(`Sui transaction refused: a coin split by command ${index} is never transferred`);
    }
  }
  if (outputs.length === 0) throw new Error("Sui transaction refused: it transfers nothing");
  return outputs;
}

/** A pure input decoded as `type`, refused unless it is exactly that type's encoding (no byte more or less). */
function exact<T, Input>(
  type: BcsType<T, Input>,
  bytes: Uint8Array,
  what: string,
): T {
  let value: T;
  try {
    value = type.parse(bytes);
  } catch (err) {
    throw new Error(`Sui transaction refused: a pure input is not a ${what} (${(err as Error).message})`);
  }
  const again = type.serialize(value as unknown as Input).toBytes();
  if (again.length !== bytes.length || again.some((b, i) => b !== bytes[i])) {
    throw new Error(`Sui transaction refused: a pure input of ${bytes.length} bytes is not a ${what}`);
  }
  return value;
}
