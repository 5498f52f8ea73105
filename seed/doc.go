// Package seed fills IMAP accounts with mail before a load run, so that
// FETCH, STORE, SEARCH and COPY address real messages of realistic sizes
// instead of an empty INBOX.
//
// A [Seeder] logs in to every account (LOGIN or AUTHENTICATE PLAIN, over
// cleartext, implicit TLS or STARTTLS), asks each folder how many messages
// it holds (STATUS MESSAGES, RFC 9051 §6.3.11), creates a missing folder
// (CREATE, §6.3.4), and APPENDs (§6.3.12) only the difference to the
// folder's target. A second run therefore appends nothing, and a run that
// was interrupted continues where it stopped. Message k of a folder is the
// same on every run with the same seed, so a resumed run adds the messages
// the interrupted one would have added.
//
// Messages come from a [Source]: [Generator] writes RFC 5322 mail whose
// sizes follow a weighted table of ranges ([Sizes]), with base64 MIME
// attachments on the large ones; [MboxSource] takes them from an mbox file
// (mboxo or mboxrd, see [MboxReader]) and cycles through it when it holds
// fewer than needed.
//
// Accounts are filled Options.Concurrency at a time, one connection each;
// a connection may pipeline Options.Pipeline APPENDs (LITERAL+, RFC 7888).
// Failed accounts are grouped by error in the Summary, and a run gives up
// when its first GiveUpAfter accounts all fail (a wrong password, a server
// that refuses everyone). Passwords never appear in errors.
//
// The package reads and writes no NATS subjects; it talks IMAP only.
package seed
