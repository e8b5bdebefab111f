/**
 * A test contract that moves its whole balance of a token to a fixed address: the same transaction, mined again after
 * a reorg with another balance, emits a Transfer of another amount under the same hash. Compiled here with solc-js
 * (offline), so the bytecode is what the few lines below say.
 */
import solc from "solc";
import type { Abi, Hex } from "viem";

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

interface IERC20 {
  function balanceOf(address who) external view returns (uint256);
  function transfer(address to, uint256 amount) external returns (bool);
}

contract Sweeper {
  address public immutable to;

  constructor(address to_) {
    to = to_;
  }

  function sweep(IERC20 token) external {
    require(token.transfer(to, token.balanceOf(address(this))), "transfer failed");
  }
}
`;

export function compileSweeper(): { abi: Abi; bytecode: Hex } {
  return compileTestContract("Sweeper", SOURCE);
}

/** Compiles one test contract `name` from `source` with solc-js (offline): its ABI and creation bytecode. */
export function compileTestContract(name: string, source: string): { abi: Abi; bytecode: Hex } {
  const file = `${name}.sol`;
  const input = {
    language: "Solidity",
    sources: { [file]: { content: source } },
    settings: { evmVersion: "cancun", outputSelection: { [file]: { [name]: ["abi", "evm.bytecode.object"] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  // deno-lint-ignore no-explicit-any
  const errors = (output.errors ?? []).filter((e: any) => e.severity === "error");
  // deno-lint-ignore no-explicit-any
  if (errors.length) throw new Error(`solc: ${errors.map((e: any) => e.formattedMessage).join("\n")}`);
  const c = output.contracts[file][name];
  return { abi: c.abi as Abi, bytecode: `0x${c.evm.bytecode.object}` };
}
