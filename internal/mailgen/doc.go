// Package mailgen writes generated RFC 5322 mail of realistic sizes: a
// weighted size table (most messages a few KiB, a heavy tail of
// attachments), headers with drawn senders and subjects, text/plain bodies
// of words and, from AttachmentFrom up, multipart/mixed bodies with a base64
// attachment (RFC 2045, RFC 2046). Everything is a pure function of the
// random source it is given: no I/O.
//
// Package seed fills mailboxes with it before a run; the producer's
// deliveries (LMTP, RFC 2033) send it during one.
package mailgen
