# The mcpgate image: the static binary (pure Go, CGO off: SQLite is
# modernc.org/sqlite) on distroless's static base, run as its non-root
# user. Build from the repository root:
#
#   docker build -t mcpgate .
#   docker run --rm -p 8080:8080 mcpgate serve --listen 0.0.0.0:8080 ...
#
# deploy/deploy_test.go builds the binary with the same flags and checks
# that it is static, and that this file runs it as a non-root user.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/mcpgate ./cmd/mcpgate

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcpgate /usr/local/bin/mcpgate
# 65532 is distroless's "nonroot"; numeric, so that Kubernetes'
# runAsNonRoot can check it without reading /etc/passwd.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/mcpgate"]
CMD ["serve", "--listen", "0.0.0.0:8080"]
