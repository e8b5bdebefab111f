// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Burnable} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Burnable.sol";

/// @title uAsset: an 18-decimal ERC-20 minted one-for-one against native-coin deposits held in custody.
/// @notice Each mint carries the deposit id it pays out, and the contract refuses a second mint for the same id,
///         so a retried or duplicated mint transaction can never create value twice.
contract UAsset is ERC20, ERC20Burnable, AccessControl {
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");

    mapping(bytes32 depositId => bool) private _minted;

    event Minted(bytes32 indexed depositId, address indexed to, uint256 amount);

    error DepositAlreadyMinted(bytes32 depositId);

    constructor(string memory name_, string memory symbol_, address admin, address minter) ERC20(name_, symbol_) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(MINTER_ROLE, minter);
    }

    function mint(address to, uint256 amount, bytes32 depositId) external onlyRole(MINTER_ROLE) {
        if (_minted[depositId]) revert DepositAlreadyMinted(depositId);
        _minted[depositId] = true;
        _mint(to, amount);
        emit Minted(depositId, to, amount);
    }

    function minted(bytes32 depositId) external view returns (bool) {
        return _minted[depositId];
    }
}
