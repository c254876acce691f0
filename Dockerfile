# syntax=docker/dockerfile:1

# taskchat: a static Go binary on distroless, running as non-root.
#
#   docker build -t taskchat .
#   docker run --rm -p 8080:8080 -e DATABASE_URL=... -e JWT_SECRET=... taskchat
#
# docker-compose.yml beside this file runs it together with PostgreSQL.

# The Go line of go.mod ("go 1.26.x"). The official image sets
# GOTOOLCHAIN=local, so a stale cached golang:1.26 older than go.mod's patch
# release fails to build: build with --pull.
ARG GO_VERSION=1.26

# ---- build ------------------------------------------------------------------
# The builder runs on the build machine's platform and cross-compiles, which
# needs no emulation because the binary is pure Go (CGO_ENABLED=0).
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-mod=readonly

# Modules first, so that editing the sources does not download them again.
# go.mod replaces the MCP go-sdk with the patched copy in third_party/, whose
# go.mod the module graph needs.
COPY go.mod go.sum ./
COPY third_party/go-sdk/go.mod third_party/go-sdk/
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

# The sources, including the SQL migrations and the default prompt that the
# binary embeds.
COPY . .
ARG TARGETOS TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/taskchat ./cmd/server

# ---- run --------------------------------------------------------------------
# static-debian12 has CA certificates (for https to the model's API), tzdata
# and /etc/passwd with the nonroot user (65532), and no shell or libc.
FROM gcr.io/distroless/static-debian12:nonroot

ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="taskchat" \
      org.opencontainers.image.description="Multi-user HTTP chat service that manages a todo list in natural language through MCP task tools" \
      org.opencontainers.image.source="https://github.com/taskchat/taskchat" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"

COPY --from=build /out/taskchat /taskchat

USER nonroot:nonroot
EXPOSE 8080
ENV ADDR=:8080

# The binary checks itself: "healthcheck" GETs http://127.0.0.1:<port of
# ADDR>/healthz and exits non-zero unless it answers 200. Exec form, since
# the image has no shell.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["/taskchat", "healthcheck"]

# Subcommands: serve (the default), token USER_ID, healthcheck [-url URL].
ENTRYPOINT ["/taskchat"]
CMD ["serve"]
