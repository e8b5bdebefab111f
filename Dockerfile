# One binary per entry point, built with `deno compile` (which downloads its runtime, so it builds here in the image,
# not on an offline machine). KV_PATH must point into the mounted volume: a compiled binary's default KV is in-memory.
FROM denoland/deno:2.9.6 AS build
WORKDIR /app
COPY deno.json deno.lock ./
COPY . .
RUN deno install --frozen \
 && deno compile --frozen --allow-net --allow-env --allow-read --allow-write --unstable-kv --unstable-cron \
      -o /out/issuance main.ts \
 && deno compile --frozen --allow-env --allow-read --allow-write --unstable-kv -o /out/issuance-admin cli/admin.ts

FROM gcr.io/distroless/cc-debian12
COPY --from=build /out/ /usr/local/bin/
ENV KV_PATH=/data/kv.sqlite3 CHAIN_MODE=live PORT=8000
VOLUME /data
EXPOSE 8000
ENTRYPOINT ["/usr/local/bin/issuance"]
