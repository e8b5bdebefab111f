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
  const input = {
    language: "Solidity",
    sources: { "Sweeper.sol": { content: SOURCE } },
    settings: { evmVersion: "cancun", outputSelection: { "Sweeper.sol": { Sweeper: ["abi", "evm.bytecode.object"] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  // deno-lint-ignore no-explicit-any
  const errors = (output.errors ?? []).filter((e: any) => e.severity === "error");
  // deno-lint-ignore no-explicit-any
  if (errors.length) throw new Error(`solc: ${errors.map((e: any) => e.formattedMessage).join("\n")}`);
  const c = output.contracts["Sweeper.sol"].Sweeper;
  return { abi: c.abi as Abi, bytecode: `0x${c.evm.bytecode.object}` };
}
