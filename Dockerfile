# Build a static quire binary, then ship it alone on a minimal non-root image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN mkdir -p /out/data && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.Version=${VERSION}" -o /out/quire ./cmd/quire

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/quire /usr/local/bin/quire
COPY --from=build --chown=65532:65532 /out/data /data
ENV QUIRE_ADDR=0.0.0.0:8080 QUIRE_DATA=/data
VOLUME /data
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/quire"]
CMD ["serve"]
