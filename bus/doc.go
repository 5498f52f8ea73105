// Package bus creates the JetStream streams and the KV bucket of the imapload
// contract (see package messages for the subjects), with one configuration
// that producers, the aggregator and the reporter share, so whichever starts
// first creates them and the others find them as they are.
//
// It also holds the few NATS conventions of the contract: the Content-Type
// header of batches and a helper to connect with credentials that never end up
// in logs.
//
// Its role table (roles.go) says what each process may publish and subscribe
// to on a NATS server with authorization — aggregator, reporter, operator and
// one user per producer id — and ServerConfig renders it as a nats-server
// configuration (`imapload roles`; deploy/nats/README.md).
package bus
