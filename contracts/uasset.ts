// The uAsset contract as code sees it: the compiled artifact (bytecode, JSON ABI) and a typed ABI for viem.
// UASSET_ABI is written out as human-readable signatures so viem infers argument and return types; a test asserts
// it is exactly the artifact's ABI, so the two cannot drift.
import { type Abi, type Hex, parseAbi } from "viem";
import artifact from "./UAsset.artifact.json" with { type: "json" };

export const UASSET_ABI = parseAbi([
  "constructor(string name_, string symbol_, address admin, address minter, uint256 supplyCap_, uint256 minterAllowance_)",

  "function mint(address to, uint256 amount, bytes32 depositId)",
  "function minted(bytes32 depositId) view returns (bool)",
  "event Minted(bytes32 indexed depositId, address indexed to, uint256 amount)",
  "error DepositAlreadyMinted(bytes32 depositId)",

  "function supplyCap() view returns (uint256)",
  "function setSupplyCap(uint256 newCap)",
  "event SupplyCapSet(uint256 previousCap, uint256 newCap)",
  "error SupplyCapExceeded(uint256 cap, uint256 wouldBe)",

  "function minterAllowance(address minter) view returns (uint256)",
  "function minterAllowanceConfigured(address minter) view returns (uint256)",
  "function configureMinter(address minter, uint256 allowance)",
  "function removeMinter(address minter)",
  "event MinterConfigured(address indexed minter, uint256 allowance)",
  "event MinterRemoved(address indexed minter)",
  "error MinterAllowanceExceeded(uint256 allowance, uint256 amount)",

  "function PAUSER_ROLE() view returns (bytes32)",
  "function pause()",
  "function unpause()",
  "function paused() view returns (bool)",
  "event Paused(address account)",
  "event Unpaused(address account)",
  "error EnforcedPause()",
  "error ExpectedPause()",

  "function name() view returns (string)",
  "function symbol() view returns (string)",
  "function decimals() view returns (uint8)",
  "function totalSupply() view returns (uint256)",
  "function balanceOf(address account) view returns (uint256)",
  "function allowance(address owner, address spender) view returns (uint256)",
  "function approve(address spender, uint256 value) returns (bool)",
  "function transfer(address to, uint256 value) returns (bool)",
  "function transferFrom(address from, address to, uint256 value) returns (bool)",
  "function burn(uint256 value)",
  "function burnFrom(address account, uint256 value)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "event Approval(address indexed owner, address indexed spender, uint256 value)",
  "error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)",
  "error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)",
  "error ERC20InvalidApprover(address approver)",
  "error ERC20InvalidReceiver(address receiver)",
  "error ERC20InvalidSender(address sender)",
  "error ERC20InvalidSpender(address spender)",

  "function DEFAULT_ADMIN_ROLE() view returns (bytes32)",
  "function MINTER_ROLE() view returns (bytes32)",
  "function hasRole(bytes32 role, address account) view returns (bool)",
  "function getRoleAdmin(bytes32 role) view returns (bytes32)",
  "function grantRole(bytes32 role, address account)",
  "function revokeRole(bytes32 role, address account)",
  "function renounceRole(bytes32 role, address callerConfirmation)",
  "function supportsInterface(bytes4 interfaceId) view returns (bool)",
  "event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender)",
  "event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender)",
  "event RoleAdminChanged(bytes32 indexed role, bytes32 indexed previousAdminRole, bytes32 indexed newAdminRole)",
  "error AccessControlBadConfirmation()",
  "error AccessControlUnauthorizedAccount(address account, bytes32 neededRole)",
]);

/** The ABI exactly as solc emitted it (untyped JSON); UASSET_ABI is the typed equivalent. */
export const UASSET_ARTIFACT_ABI: Abi = artifact.abi as Abi;

/** Creation bytecode (0x-prefixed) to deploy with `deployContract({ abi: UASSET_ABI, bytecode, args })`. */
export const UASSET_BYTECODE: Hex = artifact.bytecode as Hex;

/** sha256 over compiler version, settings and every source the bytecode was compiled from. */
export const UASSET_SOURCE_HASH: string = artifact.sourceHash;

/** keccak256("MINTER_ROLE"), as the contract defines it. */
export const MINTER_ROLE: Hex = "0x9f2df0fed2c77648de5860a4cc508cd0818c85b8b8a1ab4ceeef8d981c8956a6";
/** keccak256("PAUSER_ROLE"). */
export const PAUSER_ROLE: Hex = "0x65d7a28e3265b37a6474929f336521b332c1681b933f6cb9f3376673440d862a";
export const DEFAULT_ADMIN_ROLE: Hex = "0x0000000000000000000000000000000000000000000000000000000000000000";
