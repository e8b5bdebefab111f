# syntax=docker/dockerfile:1
# Two binaries built with `deno compile`, which downloads its runtime, so they are built here in the image and not on
# an offline machine: `issuance` (main.ts, the service; `issuance healthcheck [/path]` probes a running one) and
# `issuance-admin` (cli/admin.ts, the operator CLI: `docker exec <container> issuance-admin ...`). Their permission,
# unstable and V8 flags are exactly `deno task start`'s and `deno task admin`'s (tests/binary_embedding_test.ts checks
# it; `--optimize-for-size`: docs/benchmarks.md "What watching costs").
# Both build from runtime/deno.json (docs/runtime.md): its import map holds only what the service and the CLI import,
# so runtime/node_modules, which the binaries embed whole, holds no test or build tool (`--node-modules-dir=none` would
# embed less but Deno 2.9.6 then fails to resolve xrpl's CommonJS requires). The one --exclude leaves out test data of
# bintrees (a prom-client dependency) that Deno 2.9.6's compile overflows its stack on. Nothing is read at run time
# but KV_PATH's folder and the configured secret files.
FROM denoland/deno:2.9.6 AS build
WORKDIR /app
COPY . .
RUN deno install --frozen --config=runtime/deno.json --entrypoint main.ts cli/admin.ts \
 && deno compile --frozen --config=runtime/deno.json --exclude=runtime/node_modules/.deno/bintrees@1.0.2/node_modules/bintrees/test \
      --allow-net --allow-env --allow-read --allow-write --unstable-kv --unstable-cron --v8-flags=--optimize-for-size \
      -o /out/bin/issuance main.ts \
 && deno compile --frozen --config=runtime/deno.json --exclude=runtime/node_modules/.deno/bintrees@1.0.2/node_modules/bintrees/test \
      --allow-env --allow-read --allow-write --allow-net --unstable-kv -o /out/bin/issuance-admin cli/admin.ts \
 && mkdir -p /out/data

# distroless: no shell, no package manager; `nonroot` runs as uid/gid 65532.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/bin/ /usr/local/bin/
# The KV folder, owned by the runtime user: a named volume mounted here starts with this owner (a bind mount must be
# chowned to 65532 by the operator).
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# A compiled binary's default KV is in-memory: KV_PATH must point into the volume. Live mode by default; secrets come
# from files (JWT_PRIVATE_KEY_FILE, MASTER_MNEMONIC_FILE, EVM_MINTER_KEY_FILE, ...) mounted read-only, e.g. /run/secrets.
ENV KV_PATH=/data/kv.sqlite3 CHAIN_MODE=live PORT=8000
VOLUME /data
EXPOSE 8000
# SIGTERM drains in-flight work and exits 0 within 8 s (under `docker stop`'s default 10 s grace before SIGKILL).
STOPSIGNAL SIGTERM
# Liveness. Supervisors that route traffic (Kubernetes, a load balancer) probe GET /readyz for readiness instead.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/issuance", "healthcheck", "/healthz"]
ENTRYPOINT ["/usr/local/bin/issuance"]
