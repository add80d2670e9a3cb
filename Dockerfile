# syntax=docker/dockerfile:1
# Herald: a static binary on distroless, run as a non-root user.
# Build: docker build -t herald .   (from the repository root)
# This file is kept correct by review: the development machines and CI
# have no Docker engine (see docs/deploy.md).

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so a code change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X github.com/heraldfed/herald/bootstrap.Version=${VERSION}" \
      -o /out/herald ./cmd/herald
# The SQLite store's data directory, owned by the image's user (distroless
# has no shell to make it at run time). Mount a volume on it.
RUN mkdir -p /out/data

# static-debian12 has CA certificates (HTTPS deliveries) and tzdata, and no
# shell; :nonroot runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/herald /usr/local/bin/herald
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV HERALD_ADDR=0.0.0.0:8080 \
    HERALD_LOG_FORMAT=json \
    HERALD_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
# SIGTERM starts the graceful shutdown (HERALD_SHUTDOWN_GRACE, 30 s by
# default): give the container longer than that before SIGKILL.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/herald"]
CMD ["serve"]
