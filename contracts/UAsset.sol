// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Burnable} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Burnable.sol";
import {ERC20Pausable} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Pausable.sol";

/// @title uAsset: an 18-decimal ERC-20 minted one-for-one against native-coin deposits held in custody.
/// @notice Each mint carries the deposit id it pays out, and the contract refuses a second mint for the same id,
///         so a retried or duplicated mint transaction can never create value twice.
/// @notice The minter key is hot (it signs every mint) and so holds MINTER_ROLE only. The admin, a separate (cold)
///         key, bounds what a stolen minter key can do: each minter has an allowance that every mint spends and only
///         the admin raises (as Circle's FiatToken `configureMinter`/`minterAllowance`), a supply cap no mint may
///         exceed, and a pause that stops mints and transfers while the key is rotated. A stolen minter key can mint
///         at most the allowance left.
contract UAsset is ERC20, ERC20Burnable, ERC20Pausable, AccessControl {
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");
    /// @notice Held by the admin; the admin may grant it to a monitoring key that must be able to stop the token fast.
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    mapping(bytes32 depositId => bool) private _minted;
    uint256 private _supplyCap;
    mapping(address minter => uint256) private _minterAllowance;
    mapping(address minter => uint256) private _minterAllowanceConfigured;

    event Minted(bytes32 indexed depositId, address indexed to, uint256 amount);
    event SupplyCapSet(uint256 previousCap, uint256 newCap);
    event MinterConfigured(address indexed minter, uint256 allowance);
    event MinterRemoved(address indexed minter);

    error DepositAlreadyMinted(bytes32 depositId);
    error SupplyCapExceeded(uint256 cap, uint256 wouldBe);
    error MinterAllowanceExceeded(uint256 allowance, uint256 amount);

    constructor(
        string memory name_,
        string memory symbol_,
        address admin,
        address minter,
        uint256 supplyCap_,
        uint256 minterAllowance_
    ) ERC20(name_, symbol_) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(PAUSER_ROLE, admin);
        _setSupplyCap(supplyCap_);
        _configureMinter(minter, minterAllowance_);
    }

    function mint(address to, uint256 amount, bytes32 depositId) external onlyRole(MINTER_ROLE) {
        if (_minted[depositId]) revert DepositAlreadyMinted(depositId);
        uint256 wouldBe = totalSupply() + amount;
        if (wouldBe > _supplyCap) revert SupplyCapExceeded(_supplyCap, wouldBe);
        uint256 allowance = _minterAllowance[msg.sender];
        if (amount > allowance) revert MinterAllowanceExceeded(allowance, amount);
        _minted[depositId] = true;
        _minterAllowance[msg.sender] = allowance - amount;
        _mint(to, amount);
        emit Minted(depositId, to, amount);
    }

    /// @notice What `minter` may still mint: each mint spends it, only the admin raises it.
    function minterAllowance(address minter) external view returns (uint256) {
        return _minterAllowance[minter];
    }

    /// @notice The allowance the admin last set for `minter` (what `minterAllowance` was then): the service's
    ///         `minter_allowance_low` alert is measured against it.
    function minterAllowanceConfigured(address minter) external view returns (uint256) {
        return _minterAllowanceConfigured[minter];
    }

    /// @notice Makes `minter` a minter with `allowance` left to mint (replacing what it had left). Admin only: the
    ///         routine top-up from the cold admin key, and how a new minter key is brought in during a rotation.
    function configureMinter(address minter, uint256 allowance) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _configureMinter(minter, allowance);
    }

    /// @notice Takes MINTER_ROLE and every allowance left from `minter` (a retired or stolen key).
    function removeMinter(address minter) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _revokeRole(MINTER_ROLE, minter);
        _minterAllowance[minter] = 0;
        _minterAllowanceConfigured[minter] = 0;
        emit MinterRemoved(minter);
    }

    function minted(bytes32 depositId) external view returns (bool) {
        return _minted[depositId];
    }

    /// @notice The most total supply mints may reach. Below the current supply it stops every mint (burns still
    ///         lower the supply).
    function supplyCap() external view returns (uint256) {
        return _supplyCap;
    }

    function setSupplyCap(uint256 newCap) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setSupplyCap(newCap);
    }

    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    function _configureMinter(address minter, uint256 allowance) private {
        _grantRole(MINTER_ROLE, minter);
        _minterAllowance[minter] = allowance;
        _minterAllowanceConfigured[minter] = allowance;
        emit MinterConfigured(minter, allowance);
    }

    function _setSupplyCap(uint256 newCap) private {
        emit SupplyCapSet(_supplyCap, newCap);
        _supplyCap = newCap;
    }

    function _update(address from, address to, uint256 value) internal override(ERC20, ERC20Pausable) {
        super._update(from, to, value);
    }
}
