#!/usr/bin/env bash
# A mint and a burn on the simulated chains, as a partner does them with curl (bash, curl and sed only).
# Run it from the repository root while `deno task dev` serves; BASE_URL (default http://localhost:8000) names the
# server, WAIT_SECONDS (default 120) bounds each wait for an order. It exits non-zero, saying why, on any failure.
set -euo pipefail
BASE_URL=${BASE_URL:-http://localhost:8000}
WAIT_SECONDS=${WAIT_SECONDS:-120}
POLL_SECONDS=${POLL_SECONDS:-1}
JSON='Content-Type: application/json'

fail() { echo "walkthrough failed: $*" >&2; exit 1; }

# req LABEL CURL-ARGS...: prints the response body; fails with the status and body unless the status is 2xx.
req() {
  local label=$1 out status
  shift
  out=$(curl -sS -w '\n%{http_code}' "$@") || fail "$label: cannot reach $BASE_URL"
  status=${out##*$'\n'}
  out=${out%$'\n'*}
  [[ $status == 2* ]] || fail "$label answered $status: $out"
  printf '%s\n' "$out"
}

# wait_for TYPE: polls GET /orders?type=TYPE until the wallet's order of that type is completed.
wait_for() {
  local orders status=""
  SECONDS=0
  while ((SECONDS < WAIT_SECONDS)); do
    orders=$(req "GET /orders" "$BASE_URL/orders?type=$1" -H "$AUTH")
    status=$(printf '%s' "$orders" | sed -nE 's/.*"status":"([a-z]+)".*/\1/p')
    case $status in
      completed) echo "$1 order completed: $orders"; return 0 ;;
      failed | cancelled) fail "the $1 order is $status: $orders" ;;
    esac
    sleep "$POLL_SECONDS"
  done
  fail "the $1 order did not complete within ${WAIT_SECONDS}s (last status: ${status:-no order yet})"
}

# 1. An operator creates an API key for a partner; the key is the last line printed, shown once.
API_KEY=$(deno task -q admin api-key create --partner acme | sed -n '$p')
[[ $API_KEY == *.* ]] || fail "deno task admin api-key create printed no key"

# 2. The partner gets a token bound to its EVM wallet (valid 365 days); a new wallet each run.
WALLET=0x$(printf '%04x' $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM)
TOKEN=$(req "POST /auth/token" -X POST "$BASE_URL/auth/token" -H "X-API-Key: $API_KEY" -H "$JSON" \
  -d "{\"walletAddress\":\"$WALLET\"}" | sed -E 's/.*"token":"([^"]+)".*/\1/')
AUTH="Authorization: Bearer $TOKEN"

# 3. A deposit address: SOL sent here is minted as uSOL to $WALLET on Base.
ADDRESS=$(req "POST /mint/wallets" -X POST "$BASE_URL/mint/wallets" -H "$AUTH" -H "$JSON" \
  -d '{"chain":"sol","destinationChain":"base"}' | sed -E 's/.*"address":"([^"]+)".*/\1/')
echo "deposit address: $ADDRESS"

# 4. Send 0.5 SOL (500000000 lamports) to it on the simulated Solana.
req "POST /sim/deposits" -X POST "$BASE_URL/sim/deposits" -H "$JSON" \
  -d "{\"chain\":\"sol\",\"address\":\"$ADDRESS\",\"amount\":\"500000000\"}"
# {"success":true,"data":{"txHash":"...","blockNumber":42}}

# 5. The order goes pending (waiting for confirmations) -> processing -> minting -> completed, in a few seconds.
wait_for mint
# ..."status":"completed","token":"SOL","amount":"500000000",..."transactionHash":"0x..."
MINTED=$(req "GET /sim/balances" "$BASE_URL/sim/balances?chain=base&address=$WALLET&token=uSOL")
echo "$MINTED"
[[ $MINTED == *'"balance":"500000000000000000"'* ]] || fail "expected 0.5 uSOL (18 decimals) on Base: $MINTED"

# 6. Burn: say where redeemed SOL goes, then send 1.5 uSOL from the wallet to the shared transfer address.
DEST=9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM
BEFORE=$(req "GET /sim/balances" "$BASE_URL/sim/balances?chain=sol&address=$DEST" |
  sed -E 's/.*"balance":"([0-9]+)".*/\1/')
req "POST /burn/wallets" -X POST "$BASE_URL/burn/wallets" -H "$AUTH" -H "$JSON" \
  -d "{\"destinationChain\":\"sol\",\"destinationAddress\":\"$DEST\"}"
req "POST /sim/faucet" -X POST "$BASE_URL/sim/faucet" -H "$JSON" \
  -d "{\"chain\":\"base\",\"address\":\"$WALLET\",\"token\":\"uSOL\",\"amount\":\"1000000000000000000\"}"
req "POST /sim/transfers" -X POST "$BASE_URL/sim/transfers" -H "$JSON" \
  -d "{\"chain\":\"base\",\"from\":\"$WALLET\",\"token\":\"uSOL\",\"amount\":\"1500000000000000000\"}"

# 7. The burn order completes and 1.5 SOL (1500000000 lamports) arrives at the destination.
wait_for burn
AFTER=$(req "GET /sim/balances" "$BASE_URL/sim/balances?chain=sol&address=$DEST" |
  sed -E 's/.*"balance":"([0-9]+)".*/\1/')
((AFTER - BEFORE == 1500000000)) || fail "expected 1.5 SOL more at $DEST, got $BEFORE -> $AFTER lamports"
echo "1.5 SOL arrived at $DEST ($BEFORE -> $AFTER lamports)"

# Public configuration, no token needed.
req "GET /config/mint" "$BASE_URL/config/mint" >/dev/null
req "GET /config/burn" "$BASE_URL/config/burn" >/dev/null
echo "walkthrough completed: a mint and a burn"
