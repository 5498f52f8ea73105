// Package producer offers open-loop IMAP load on command and ships what it
// measured, without distortion, to the aggregator.
//
// A [Producer] runs on each load host. [New] checks its [Options] (no I/O);
// [Producer.Run] connects it to the fleet and runs step commands until its
// context ends.
//
// # Subjects
//
//   - Reads step commands ([messages.StepCommand], JSON) on the core subject
//     [messages.StepSubject] ("imapload.step") and, when the message is a
//     request, answers a [messages.StepReply] (so
//     `nats req imapload.step '…' --replies 0` lists the fleet's answers; a
//     plain `nats pub` gets no answer and works the same, but a refusal of
//     one is published on [messages.StepRefusedSubject], which
//     `nats sub imapload.step.refused` shows).
//   - Publishes sample batches ([messages.SampleBatch], msgpack, Content-Type
//     [bus.MsgpackType]) to JetStream on
//     [messages.SamplesSubject] ("imapload.samples.<run>.<step>.<producer>")
//     with the message id [messages.BatchMsgID], so a retried publish is
//     stored once. A batch whose ack did not come is kept and published
//     again with the same id (nothing is sent while the connection is down);
//     only the batches still unacknowledged when the retry budget of an
//     outage ends (Options.PublishRetry, 2 min by default) count as lost
//     (Health.Lost of the final batch). Once Run's context ends, a step's
//     publishing gets 5 s more; what is still unsent then is counted lost
//     and logged, so a stop with NATS down for good stays short.
//   - Registers in the KV bucket [messages.ProducersBucket] under its id
//     ([messages.ProducerInfo], JSON), re-put every Options.Heartbeat; the
//     bucket's TTL expires the entries of producers that died. Run deletes
//     the entry on the way out (with NATS down it lets the TTL expire it). After a NATS restart the heartbeat recreates
//     the bucket and the samples stream and registers again.
//
// # Steps
//
// The share rule: a producer offers the command's ProducerRate if it is set;
// otherwise Rate divided by the command's Producers if that is set; otherwise
// Rate divided by the live producers, the number of keys in the registry
// bucket when the command arrives, itself included
// ([messages.StepCommand.ShareFor]). Every producer counts at about the same
// moment, so the shares add up to the fleet rate as long as the registry
// does not change under the command; a producer that died less than a TTL
// ago still counts (name Producers in the command to be exact).
//
// The preemption rule: a valid command for a new (run, step) while a step
// runs ends the running step early — its dispatcher stops, commands in flight
// finish or time out, queued ones are counted as dropped, its final batch is
// published — and then starts the new step. A command for the (run, step)
// running or last run is answered again with the same reply and is not
// restarted, so retried requests are harmless. An invalid command is refused
// with a clear error and changes nothing: every request is answered, and the
// log says it at most once per kind of refusal per 10 s, with a count.
//
// A step's clock starts when the producer accepts it (monotonic time). Load is
// offered from the start for warm-up + duration; the measurement window is the
// last duration. Only commands whose intended start falls in the window are
// recorded, and set-up work (dial, LOGIN, the session's SELECT) only if it
// starts in the window. Batch 0 is published at once, empty, to tell the
// aggregator to wait for this producer's final batch; then a batch every
// FlushInterval with what happened since the previous one, and a final batch
// once the commands still queued or in flight at the step's end have
// finished: connected sessions drain the queue for at most one OpTimeout,
// and what is still queued then is counted as dropped, so every command
// scheduled in the window is counted exactly once (completed, failed or
// dropped). From and To of a batch are offsets from the window start.
//
// # Open loop
//
// A dispatcher wakes at each command's intended start — i/rate for constant
// arrivals, exponential gaps for Poisson — whatever the server does, draws
// the command from the workload mix, records its schedule lag and puts it on
// a bounded queue. Free sessions take commands from the queue. A command that
// finds the queue full is dropped by the generator, counted apart from server
// errors. Response time runs from the intended start (so the time a command
// waited for a session counts: no coordinated omission), service time from
// the moment it was sent. A generator whose schedule lag P99 is high marks
// its batches saturated: it measured itself, not the server.
//
// Each batch's health also names what may have caused the lag: the CPU the
// process used and may use (GOMAXPROCS, which Go caps by the cgroup's quota),
// how long its threads waited on a run queue (/proc/self/task/*/schedstat),
// the host's CPU pressure (/proc/pressure/cpu), the share of time its cgroup
// was throttled (cpu.stat), and whether the process was stopped and
// continued (SIGCONT). A counter the host does not offer reads zero.
//
// # Sessions (RFC 9051)
//
// Each session dials (TCP connect, implicit TLS per RFC 8314 timed apart, and
// the server greeting, §7.1 — phase dial), logs in with LOGIN (§6.2.3, phase
// login) and selects INBOX (§6.3.2, phase select), then serves scheduled
// commands one at a time: LIST "" "*" (§6.3.9), SELECT INBOX, FETCH of a
// random message's UID, FLAGS, RFC822.SIZE, BODY.PEEK[HEADER.FIELDS (Date From To
// Subject Message-ID)] and BODY.PEEK[] (§6.4.5; by UID, §6.4.9,
// once the session has seen some, by sequence number before), STORE
// +FLAGS.SILENT (\Seen) on one message (§6.4.6), APPEND of a small generated RFC 5322
// message (§6.3.12; its UID from APPENDUID, RFC 4315) and LOGOUT (§6.1.3),
// after which the session reconnects. About one APPEND in ten is fetched back
// at once and compared byte for byte; a mismatch or a missing message is an
// error of kind "integrity" in phase fetch; the checks run and failed are
// counted in each batch (messages.Checks), and an APPEND the server names no
// UID for (no UIDPLUS) is counted as one no check could address, so a
// report says when checks were disabled. A step's fetch_target pins FETCH and
// the body FETCH to the newest messages of INBOX ("recent") instead of
// random ones.
//
// # Client commands
//
// When a step's mix names them, sessions also send what mail clients send
// beside listing and reading, each its own phase: STATUS (MESSAGES UIDNEXT
// UNSEEN) of a listed folder or INBOX (§6.3.11, phase status); UID SEARCH
// SINCE a date 1–30 days back (§6.4.4, search_date) and UID SEARCH HEADER
// Subject or From a word (search_header); UID FETCH BODY.PEEK[] of a whole
// message, the largest known of three random picks, read as it streams
// (body); UID COPY of a message to imapload's own mailbox "imapload-copies",
// created on demand (§6.4.7, copy); UID MOVE there of a message imapload
// appended to the account (RFC 6851, move); STORE +FLAGS.SILENT (\Deleted)
// and UID EXPUNGE of a message imapload appended (RFC 4315, expunge), one
// appended first when the account has none; NOOP (§6.1.2,
// noop); and IDLE (RFC 2177, idle), whose figure is push latency: from the
// send of an APPEND on a second connection of the session (same account,
// dialed when first needed, kept, closed with the session) to the first
// untagged EXISTS on the idling one, then DONE. MOVE and EXPUNGE touch only
// mail imapload appended, never seeded or users' mail; every 32 COPYs and
// MOVEs a session trims imapload-copies back to 100 messages once it holds
// over 200 (all of it imapload's), unrecorded. A command with nothing to
// address (an empty INBOX, no message of its own to move or expunge) is not
// sent and fails with a generator kind.
//
// Every operation runs under
// Options.OpTimeout: on expiry the connection is closed and the operation
// recorded as an error of kind "timeout". A failed command is a sample, never
// an error that stops anything. After a failure or a dropped connection a
// session reconnects after an exponential backoff with full jitter (50 ms
// base, 5 s cap), so dropped sessions do not return in one wave.
//
// The generator causes no errors of its own at the server. A failed SELECT
// leaves no mailbox selected (§6.3.2), where FETCH and STORE are invalid, so
// a session notes whether INBOX is selected and keeps its connection (as a
// mail client does); a FETCH or STORE that comes to it then first selects
// INBOX again (recorded in phase select, like a reconnect's SELECT). Only if
// that fails too does the session drop the connection and reconnect after a
// backoff, and the command counts as failed with a generator kind.
// Disconnecting at once after every failed SELECT would instead turn each
// such NO into a dial and a LOGIN the offered load did not ask for. Errors
// imapload itself causes (no free account, an empty INBOX, a reply with
// response code CLIENTBUG) have kinds that start with
// [messages.GeneratorKind], so they are never taken for the server's.
//
// The first error of each (phase, kind) in a step is logged once, at Warn
// level, with a scrubbed example, warm-up included: a wrong password or a
// closed port shows in the producer's log at once.
//
// Like real users, every producer draws its accounts from the whole pool, in
// its own shuffled order, so an account is logged in from several producers
// at once; within one producer an account has at most SessionsPerAccount
// sessions, and a session takes the next free account at each reconnect.
// Session starts are spread over the command's stagger window: a per-producer
// offset (a hash of its id) plus k/n of the window for session k of n.
//
// # Held connections (RFC 2177)
//
// A step command's connections (messages.StepCommand.Connections, this
// producer's share in StepInfo.Connections) are held beside the sessions:
// each logs in (as the sessions do: LOGIN or AUTHENTICATE PLAIN, TLS or
// STARTTLS), selects INBOX and sends IDLE, started over the stagger window,
// and idles until the step ends, when it sends DONE and LOGOUT. Every
// Options.IdlePeriod it sends DONE and IDLE again, as RFC 2177 §3 asks of
// clients before servers' 30-minute inactivity timeout; one that breaks is
// set up again after a backoff of 1 s growing to 30 s, with full jitter.
// Connection k logs in as account k modulo the accounts, outside the
// sessions' account pool. Their set-up (dial, login, SELECT, IDLE accepted)
// is phase hold, so that it never mixes with the sessions' dial and login;
// each batch's health says how many were idling at its cut, the fewest in
// its part of the window and how many broke. A held connection uses a
// minimal client of its own (idleconn.go): one goroutine, blocked reading
// its socket, and no buffer while it idles — go-imap's client costs a
// reader goroutine and two 4 KiB buffers per connection.
//
// # Deliveries (RFC 2033, RFC 5321)
//
// A step's deliver_rate (this producer's share in StepInfo.DeliverRate)
// delivers generated mail beside the commands, open loop at a rate of its
// own, to accounts drawn uniformly from Options.Accounts (at
// Options.DeliverDomain when a name has no domain): by LMTP to
// Options.LMTPAddr (LHLO) or by SMTP to Options.SMTPAddr (EHLO), each over a
// connection of its own (STARTTLS or implicit TLS and AUTH PLAIN as
// Options ask, for SMTP submission), at most DeliverConns at once; one
// that finds DeliverQueue full, or waits in it more than a second for a
// free connection, is dropped by the generator. Messages have the sizes
// seed gives (internal/mailgen, Options.DeliverSizes) and a Message-ID
// unique to the producer's step. Phase deliver runs from the intended start
// (service time from the dial) to the recipient's reply after DATA; its
// errors name the stage (dial, LHLO, MAIL, RCPT, DATA). Deliveries are
// neither scheduled commands nor their drops: they are counted in their
// phase and in the batch's Arrivals.
//
// Time to inbox (phase inbox): a delivery to an account with a held
// connection is awaited there by its Message-ID from its end of DATA. A
// held connection of a step that delivers learns UIDNEXT at SELECT; on an
// EXISTS it ends IDLE, fetches the Message-ID header of each message from
// UIDNEXT on (UID FETCH BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)]) and idles
// again, as a phone's mail client does. The time to inbox runs to the
// EXISTS that announced the message. A delivery not seen within
// Options.InboxTimeout is an inbox error ("never seen") and counts as
// missing; one connection seeing a Message-ID twice counts a duplicate. At
// the step's end the held connections stay until every awaited delivery
// was seen or timed out, within the step's drain (one OpTimeout; one
// still unseen then is missing).
//
// Passwords are secrets: they are never logged or published, and they are
// scrubbed from error samples as a second line of defence.
package producer
