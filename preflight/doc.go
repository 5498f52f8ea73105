// Package preflight checks, before any load, that the IMAP server under
// test is reached the way the run's flags say — the port speaks what
// --tls, --starttls or neither expects, its certificate is trusted, one
// account logs in — and, when it is not, names the mistake and its fix:
//
//   - a clear-text port under --tls: "this port speaks plain IMAP: drop
//     --tls, or use --starttls";
//   - an implicit-TLS port without --tls: detected, not timed out: after
//     Target.GreetingWait (5 s) without a greeting, a TLS handshake on a
//     second connection is tried, and "add --tls" is the answer when it
//     succeeds;
//   - an untrusted certificate: "--tls-ca FILE" (or its name mismatch, or
//     its expiry);
//   - STARTTLS not offered; a login refused, waited for long enough
//     (Target.Timeout, 30 s) that a server's deliberate delay of a failed
//     login (Dovecot's auth_failure_delay) reads as the refusal it is; a
//     server that takes passwords over TLS only;
//   - a closed port, an unreachable host, a name that does not resolve, a
//     port that speaks something else, a server that greets with BYE.
//
// Every error wraps one sentinel of errors.go, with the address and the
// server's own answer as detail; the fixes are phrased in imapload's flags
// (the same in seed, producer and run). [Mismatch] tells the two kinds
// apart: a server that answered otherwise than the flags said (the command
// line needs fixing: imapload exits 2, a usage error) from one that cannot
// be reached (imapload exits 1, like an unreachable NATS: the run could not
// be carried out, and trying again later may work).
//
// The password is sent to the server only, never put in an error. Check
// makes one connection (two when it probes for TLS) and one login, so it
// is cheap beside any load. It speaks IMAP only (RFC 9051: the greeting
// §7.1, STARTTLS §6.2.1, LOGIN §6.2.3, AUTHENTICATE §6.2.2) and reads or
// writes no NATS subject.
package preflight
