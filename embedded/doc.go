// Package embedded runs the real servers imapload needs inside the test (or
// demo) process: a NATS server with JetStream and an IMAP test server with
// knobs that make it behave like a loaded or faulty production server.
//
// Both servers listen on 127.0.0.1 by default and start with a constructor
// that does I/O and returns only when the server accepts connections, in the
// style of net/http/httptest: [StartNATS] and [StartIMAP]. Shut them down
// with [NATS.Shutdown] and [IMAP.Close]; both wait for their goroutines and
// may be called more than once.
//
// # NATS
//
// [StartNATS] starts nats-server in-process with JetStream. The store
// directory is required so that concurrent test processes never share the
// server's default $TMPDIR/jetstream. With a cluster name, a cluster listen
// address and routes ([NATSOptions.ClusterName], [NATSOptions.ClusterListen],
// [NATSOptions.Routes]) three of them form one JetStream cluster; each node
// then needs a name of its own. The package reads and writes no NATS
// subjects itself; the subjects and streams belong to package messages.
//
// # IMAP
//
// [StartIMAP] serves an in-memory IMAP4rev1/IMAP4rev2 server (RFC 3501,
// RFC 9051) built on go-imap v2's imapserver and imapmemserver, seeded with
// numbered users whose INBOX already holds a few messages. Every knob but
// the mailbox bound is off by default:
//
//   - capacity: a pool of Workers slots, each held for ServiceTime per command,
//     so the server saturates at a known Workers/ServiceTime commands per second;
//   - slow backend: a stable fraction of the accounts pays SlowDelay on every
//     mailbox command;
//   - login cost: bcrypt-hashed passwords with a login cache, so the first login
//     of an account is slow and later ones are fast;
//   - implicit TLS (IMAPS, RFC 8314) with an in-memory self-signed certificate;
//   - faults: connections dropped abruptly and commands answered
//     NO [SERVERBUG];
//   - bounded mailboxes (1000 messages by default): APPEND quietly expunges
//     the oldest messages beyond MaxMessages, so long load runs keep SELECT
//     cheap;
//   - mail delivery: with LMTPAddr, an LMTP listener (RFC 2033, go-smtp's
//     server) stores delivered mail in the recipients' INBOXes, where IDLE
//     sessions see its EXISTS; each recipient passes the command gate like a
//     command, then a delivery pool of its own (DeliverWorkers slots held for
//     DeliverServiceTime), so delivery can be the server's bottleneck
//     ([IMAP.DeliverCapacity]); NoFraction answers a recipient 451.
//
// Costs are charged per command at the connection, before go-imap parses
// it: the connection splits the client's byte stream into commands
// (RFC 9051 §2.2.1, literals included), so LOGOUT, CAPABILITY and NOOP,
// which never reach an imapserver.Session, pay too, and no command pays
// twice. Faults that need an IMAP answer (NO [SERVERBUG]), the login cost
// and the mailbox bound live in the Session, which wraps imapmemserver's.
// The server offers no STARTTLS; with TLS every connection is encrypted
// from the first byte, and LOGIN is allowed on all of them.
//
// Counters ([IMAP.Stats]), the logged-in sessions ([IMAP.Sessions]) and the
// OnConnect/OnLogin hooks let other packages' tests check what a client did.
//
// Non-test code must not import this package, except cmd/.
package embedded
