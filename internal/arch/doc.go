// Package arch holds no code, only a test that keeps imapload's dependency
// rules: producer, aggregator and reporter never import one another; messages
// imports no other imapload package but its own codec, messages/internal/wire
// (which imports none, and which only messages imports), and no NATS
// client; non-test code never imports embedded except cmd/.
package arch
