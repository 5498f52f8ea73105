// Package observe is the role that runs beside the server under test
// (`imapload observe`): during each step's measurement window it scrapes
// the server's own metrics endpoints and publishes, per step, the figures
// that say why the server kept up or did not: the mail host's CPU, disk,
// memory and network from node_exporter, Dovecot's logins, authentication
// and IMAP command durations from its OpenMetrics listener, the embedded
// test server's workers and queue. It runs where the endpoints are
// reachable, often on the mail host itself, so that they never need
// exposing; the aggregator attaches its figures to the step's result
// (messages.StepResult.Server) and the reporter names the bottleneck.
//
// # Subjects
//
// It subscribes to the core subject messages.StepSubject ("imapload.step")
// and answers no request (the producers do). For each new step command it
// publishes two messages.ServerFigures, JSON, in the stream
// messages.ServerStream ("IMAPLOAD_SERVER") on
// "imapload.server.<run>.<step>.<observer>", with the message ids
// messages.ServerMsgID gives, so that a retried publish is stored once: an
// announcement when the command arrives (so that the aggregator knows to
// wait for this observer), and the figures when the window ends.
//
// # The window and the scrapes
//
// The window starts the step's warm-up after the command arrived, as the
// producers count it, and lasts its duration. Every endpoint is scraped at
// the start, every Options.Interval (1 s) on that schedule, and at the end,
// each endpoint on a goroutine of its own, each scrape bounded by
// Options.Timeout and Options.MaxBytes. A scrape that fails (refused, timed
// out, an HTTP error, text that parses neither as Prometheus text nor as
// OpenMetrics) is counted in that endpoint's figures with its error, never
// left a silent gap, and never stops the others. A new step command cuts
// the step in hand short; its figures are published marked stopped early.
//
// # What is derived
//
// Scrapes are folded in as they arrive, in memory that grows with the
// series an endpoint has (capped), not with the window's length. A counter
// becomes its rate over the window: each series' increase from scrape to
// scrape, a decrease counting as a reset to zero, over the time between
// its first and last scrape; its Min and Max are the lowest and highest
// rate between two scrapes. A gauge gives its mean, Min and Max over the
// scrapes. Names carry their unit, as Prometheus names do:
//
//   - node_exporter: node_cpu_busy_cores (every mode but idle, iowait and
//     steal, over all CPUs), node_cpu_{user,system,iowait,steal}_cores,
//     node_cpu_cores, node_load1, node_procs_running,
//     node_memory_available_bytes, node_memory_total_bytes,
//     node_disk_busy_ratio (the busiest disk), node_disk_read_bytes_per_second,
//     node_disk_written_bytes_per_second, node_network_receive_bytes_per_second
//     and node_network_transmit_bytes_per_second (all but lo),
//     node_context_switches_per_second.
//   - Dovecot: each `metric NAME` of its configuration, exported as
//     dovecot_NAME_total and dovecot_NAME_duration_seconds_total, gives
//     dovecot_NAME_per_second and dovecot_NAME_duration_seconds, the mean
//     duration of one event (deploy/dovecot's config defines logins,
//     auth_requests, imap_commands, …).
//   - the embedded test server: imapload_imapserver_workers,
//     imapload_imapserver_workers_busy (from the busy seconds),
//     imapload_imapserver_queue_length, imapload_imapserver_connections,
//     imapload_imapserver_commands_per_second, imapload_imapserver_logins_per_second.
//   - any metric named in Options.Metrics (--metric), summed over its series
//     under its own name: a counter's rate, a gauge's mean, a summary's or
//     histogram's mean observation (and NAME_count, their rate).
package observe
