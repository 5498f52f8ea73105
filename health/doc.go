// Package health is the small HTTP endpoint of every long-running imapload
// process (producer, aggregator, reporter, nats), for orchestrators and
// dashboards:
//
//   - /healthz answers 200 while the process is up (liveness);
//   - /readyz answers 200 when the process can do its job, 503 with the
//     reason when not: for the roles, when their NATS connection is up
//     (readiness);
//   - /metrics is the Prometheus text exposition of a private registry
//     (never the global default one): the Go runtime and process collectors,
//     and what the process measured.
//
// A producer feeds Metrics.ObserveBatch with every sample batch it cuts, so
// /metrics shows per step what it offered, delivered and dropped, its errors
// by phase, its schedule lag and its CPU; the aggregator feeds
// Metrics.ObserveResult with every step result it publishes (delivered rate,
// ratio, verdict). Operators see the load beside their mail server's own
// dashboards.
//
// Label values are bounded: run and step (only the MaxSteps most recent
// steps keep their series; older ones are deleted), phase (one of
// messages.Phases) and verdict (three values). Producer ids and error
// messages are never labels: a process exposes only its own figures, and
// errors are counted per phase, with the number of distinct kinds.
//
// The package reads no subject: it sees only what its process hands it.
package health
