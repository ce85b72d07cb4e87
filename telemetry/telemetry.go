// Package telemetry sets up quire's Prometheus registry and OpenTelemetry
// tracing, and holds the collectors that are not tied to one dependency:
// git operation timings (through quire.ObserveFunc), cache hit counts
// (through quire.CacheStats), active sessions and build information. HTTP
// metrics live in httpapi and Redis metrics in cache, beside the code they
// measure; everything registers on the one registry made here, never on
// Prometheus's global one.
package telemetry
