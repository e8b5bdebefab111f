// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Burnable} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Burnable.sol";
import {ERC20Pausable} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Pausable.sol";

/// @title uAsset: an 18-decimal ERC-20 minted one-for-one against native-coin deposits held in custody.
/// @notice Each mint carries the deposit id it pays out, and the contract refuses a second mint for the same id,
///         so a retried or duplicated mint transaction can never create value twice.
/// @notice The minter key is hot (it signs every mint) and so holds MINTER_ROLE only. The admin, a separate key,
///         bounds what a stolen minter key can do: a supply cap no mint may exceed, and a pause that stops mints and
///         transfers while the key is rotated.
contract UAsset is ERC20, ERC20Burnable, ERC20Pausable, AccessControl {
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");
    /// @notice Held by the admin; the admin may grant it to a monitoring key that must be able to stop the token fast.
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    mapping(bytes32 depositId => bool) private _minted;
    uint256 private _supplyCap;

    event Minted(bytes32 indexed depositId, address indexed to, uint256 amount);
    event SupplyCapSet(uint256 previousCap, uint256 newCap);

    error DepositAlreadyMinted(bytes32 depositId);
    error SupplyCapExceeded(uint256 cap, uint256 wouldBe);

    constructor(string memory name_, string memory symbol_, address admin, address minter, uint256 supplyCap_)
        ERC20(name_, symbol_)
    {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(PAUSER_ROLE, admin);
        _grantRole(MINTER_ROLE, minter);
        _setSupplyCap(supplyCap_);
    }

    function mint(address to, uint256 amount, bytes32 depositId) external onlyRole(MINTER_ROLE) {
        if (_minted[depositId]) revert DepositAlreadyMinted(depositId);
        uint256 wouldBe = totalSupply() + amount;
        if (wouldBe > _supplyCap) revert SupplyCapExceeded(_supplyCap, wouldBe);
        _minted[depositId] = true;
        _mint(to, amount);
        emit Minted(depositId, to, amount);
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

    function _setSupplyCap(uint256 newCap) private {
        emit SupplyCapSet(_supplyCap, newCap);
        _supplyCap = newCap;
    }

    function _update(address from, address to, uint256 value) internal override(ERC20, ERC20Pausable) {
        super._update(from, to, value);
    }
}
