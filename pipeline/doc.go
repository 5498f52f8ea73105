// Package pipeline runs the whole of imapload in one process, for
// `imapload run` and `imapload demo`: a NATS server with JetStream (embedded,
// or an existing one given by URL), local producers, the aggregator, the
// reporter and the ramp controller, meeting on the subjects of package
// messages exactly as separate processes would — each role on a NATS
// connection of its own — so that one command finds the knee and a fleet can
// grow from it without a second method.
//
// # Lifecycle
//
// [Run] does I/O from start to end and returns when everything it started
// has stopped:
//
//  1. NATS: an embedded server with a temporary store (removed at the end),
//     or one kept in [Options.StoreDir]; with [Options.Listen] it is exposed
//     on that address and admits only the NKey users of `imapload roles`'
//     table (bus.FleetPermissions), one per role, their seeds written 0600
//     under STORE/credentials: producers on other hosts join with
//     `imapload producer --nats … --nats-nkey SEED --id ID` ([Endpoint]).
//     With [Options.NATS] it uses that server instead.
//  2. Roles: the aggregator (unless one already consumes the batches on
//     that NATS: its durable consumer has pull requests waiting), the
//     reporter of the run, and [Options.Producers] local producers.
//  3. It waits, bounded by [Options.ProducerWait], until every local
//     producer and [Options.ExpectProducers] more are in the registry
//     (messages.ProducersBucket); producers from elsewhere are counted and
//     offered load like local ones.
//  4. The ramp: [Options.Drive] (by default ramp.Controller.Run) until the
//     plan ends; a role that fails stops it with its error.
//  5. Shutdown: the roles are cancelled and waited for (the reporter's last
//     files are written before Run returns), connections closed, the server
//     shut down and a temporary store removed.
//
// Presentation stays with the caller: [Options.OnReady] says where NATS is
// and how producers join, the ramp's OnStep and OnResult (or a Drive of
// its own, which `imapload run` uses to draw the live progress line) report
// each step.
package pipeline
