/** The slice of the uAsset contract the adapters call and watch (its interface is fixed; see contracts/). */
import { parseAbi, parseAbiItem } from "viem";

export const UASSET_ADAPTER_ABI = parseAbi([
  "function mint(address to, uint256 amount, bytes32 depositId)",
  "function minted(bytes32 depositId) view returns (bool)",
  // ERC20Burnable and ERC-20, called by the transfer address (uasset_sender.ts): burns of redeemed uAssets, refunds.
  "function burn(uint256 amount)",
  "function transfer(address to, uint256 amount) returns (bool)",
  "function balanceOf(address account) view returns (uint256)",
  "function totalSupply() view returns (uint256)",
  "error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)",
  "event Minted(bytes32 indexed depositId, address indexed to, uint256 amount)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "error DepositAlreadyMinted(bytes32 depositId)",
  // Refusals the contract's admin can lift: a mint waits for them instead of failing (see minter.ts).
  "error EnforcedPause()",
  "error SupplyCapExceeded(uint256 cap, uint256 wouldBe)",
  "error MinterAllowanceExceeded(uint256 allowance, uint256 amount)",
  // The minter's allowance (what it may still mint) and what the admin last set it to: the low-allowance alert.
  "function minterAllowance(address minter) view returns (uint256)",
  "function minterAllowanceConfigured(address minter) view returns (uint256)",
]);

export const TRANSFER_EVENT = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");
export const MINTED_EVENT = parseAbiItem("event Minted(bytes32 indexed depositId, address indexed to, uint256 amount)");
