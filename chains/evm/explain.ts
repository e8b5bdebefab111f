/**
 * Verify before record (chains/effects.ts) for the EVM chains: what a signed transaction of the minter key
 * (minter.ts `prepareMint`) or of the transfer address (uasset_sender.ts `prepareBurn`, `prepareTransfer`) does, read
 * back from its own bytes (`PreparedTx.raw`, the serialized signed EIP-1559 transaction as tx_sender.ts signs it) with
 * viem's decoders, never with the code that built it.
 *
 * Only what we build is understood: a signed EIP-1559 transaction, no access list, calling a uAsset's `mint`, `burn`
 * or `transfer`. Anything else (another transaction type, a contract creation, another function, calldata that is
 * not exactly the canonical encoding of its arguments) is refused with an Error rather than ignored, since what we do
 * not decode could move value. Native `value` is not refused: it is reported as an output, and
 * chains/effects.ts `differences` names it ("moves native value").
 */
import {
  decodeFunctionData,
  encodeFunctionData,
  getAddress,
  type Hex,
  isHex,
  parseTransaction,
  recoverTransactionAddress,
  serializeTransaction,
  type TransactionSerializableEIP1559,
} from "viem";
import type { EvmChain } from "../catalog.ts";
import type { ContractCall, TxEffects } from "../effects.ts";
import { UASSET_ADAPTER_ABI } from "./abi.ts";

/**
 * The three uAsset functions our EVM transactions call, taken from the adapter ABI (chains/evm/abi.ts) so a change of
 * signature there changes what is understood here. `minted`, `balanceOf` and the rest are reads we never sign.
 */
const CALLED_ABI = UASSET_ADAPTER_ABI.filter((item) =>
  item.type === "function" && (item.name === "mint" || item.name === "burn" || item.name === "transfer")
);
if (CALLED_ABI.length !== 3) throw new Error("chains/evm/abi.ts must declare mint, burn and transfer");

/** secp256k1's group order over two: EIP-2 makes nodes refuse a signature whose s is above it. */
const SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/**
 * What the signed transaction `raw` (hex, as `PreparedTx.raw`) does on `chain`. `chain` only names the effects: the
 * chain id comes from the bytes, and `differences` compares it with the intent's. Throws on bytes it cannot decode or
 * that hold anything we never build.
 */
export async function explainEvmTx(raw: string, chain: EvmChain): Promise<TxEffects> {
  const refuse = (why: string): never => {
    throw new Error(`${chain}: refusing to explain the transaction ${short(raw)}: ${why}`);
  };
  if (typeof raw !== "string" || !isHex(raw, { strict: true }) || raw.length < 4) {
    refuse("it is not a 0x-prefixed hex string");
  }
  const bytes = raw.toLowerCase() as Hex;
  let tx: ReturnType<typeof parseTransaction>;
  try {
    tx = parseTransaction(bytes);
  } catch (err) {
    return refuse(`viem cannot parse it (${firstLine(err)})`);
  }
  // tx_sender.ts signs EIP-1559 only; legacy and EIP-2930 are never built, EIP-4844 carries blobs and EIP-7702
  // delegates the signing account's code to another contract: all refused.
  if (tx.type !== "eip1559") refuse(`its type is ${tx.type}; we sign eip1559 only`);
  const t = tx as TransactionSerializableEIP1559 & { r?: Hex; s?: Hex; yParity?: number };
  if (t.r === undefined || t.s === undefined || t.yParity === undefined) refuse("it carries no signature");
  if (BigInt(t.s!) > SECP256K1_HALF_N) refuse("its signature has a high s, which nodes refuse (EIP-2)");
  if (t.accessList && t.accessList.length > 0) refuse("it carries an access list, which we never build");

  // The decoded fields must serialize back to exactly the signed bytes: a non-canonical encoding (leading zeros,
  // trailing bytes) could decode to something else than what a node reads, and `from` is recovered from the re-encoded
  // fields, so it is only trustworthy when they are the signed ones.
  let reencoded: string;
  try {
    reencoded = serializeTransaction(
      { ...t, r: undefined, s: undefined, v: undefined, yParity: undefined } as TransactionSerializableEIP1559,
      { r: t.r!, s: t.s!, yParity: t.yParity! },
    );
  } catch (err) {
    return refuse(`viem cannot re-encode what it parsed (${firstLine(err)})`);
  }
  if (reencoded.toLowerCase() !== bytes) refuse("its encoding is not canonical (viem re-encodes it differently)");

  let from: string;
  try {
    from = (await recoverTransactionAddress({ serializedTransaction: bytes as `0x02${string}` })).toLowerCase();
  } catch (err) {
    return refuse(`its signer cannot be recovered (${firstLine(err)})`);
  }

  if (!t.to) refuse("it creates a contract; we only call uAsset contracts");
  const contract = getAddress(t.to!).toLowerCase();
  const value = t.value ?? 0n;
  const effects: TxEffects = {
    chain,
    from,
    outputs: value === 0n ? [] : [{ to: contract, amount: value }],
    memo: null,
    chainId: t.chainId,
    nonce: BigInt(t.nonce ?? 0),
    maxFee: (t.gas ?? 0n) * (t.maxFeePerGas ?? 0n),
  };
  // No calldata is a plain native payment: no call, and its value is in `outputs`, which `differences` reports.
  if (t.data === undefined || t.data === "0x") return effects;
  effects.call = decodeCall(t.data, contract, refuse);
  return effects;
}

function decodeCall(data: Hex, contract: string, refuse: (why: string) => never): ContractCall {
  let decoded: ReturnType<typeof decodeFunctionData<typeof CALLED_ABI>>;
  try {
    decoded = decodeFunctionData({ abi: CALLED_ABI, data });
  } catch (err) {
    return refuse(
      `its calldata (selector ${data.slice(0, 10)}) is not a uAsset mint, burn or transfer (${firstLine(err)})`,
    );
  }
  // Extra bytes after the arguments, or an address with dirty high bits, decode to the same arguments here but are
  // not what encodeFunctionData produces: refused, so the bytes and the decoded call are one and the same.
  const canonical = encodeFunctionData({ abi: CALLED_ABI, ...decoded } as Parameters<typeof encodeFunctionData>[0]);
  if (canonical.toLowerCase() !== data.toLowerCase()) {
    refuse(`its ${decoded.functionName} calldata is not the canonical encoding of its arguments`);
  }
  switch (decoded.functionName) {
    case "mint": {
      // abi.ts: mint(address to, uint256 amount, bytes32 depositId)
      const [to, amount, depositId] = decoded.args as readonly [Hex, bigint, Hex];
      return { contract, function: "mint", depositId: depositId.toLowerCase(), to: to.toLowerCase(), amount };
    }
    case "burn": {
      const [amount] = decoded.args as readonly [bigint];
      return { contract, function: "burn", amount };
    }
    case "transfer": {
      const [to, amount] = decoded.args as readonly [Hex, bigint];
      return { contract, function: "transfer", to: to.toLowerCase(), amount };
    }
    default:
      return refuse(`it calls ${String((decoded as { functionName: unknown }).functionName)}`);
  }
}

function short(raw: unknown): string {
  const text = typeof raw === "string" ? raw : String(raw);
  return text.length > 26 ? `${text.slice(0, 26)}...` : text;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0];
}
