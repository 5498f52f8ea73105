// Package verdict holds imapload's rules for judging what a run measured,
// in one place: whether a step held, fell below the threshold or could not be
// measured (and why, and what to do), where the knee is, what the run as a
// whole concluded, and whether the run met the user's pass/fail criteria.
//
// It is pure: it reads messages.StepResult and messages.RunReport and needs
// neither NATS nor IMAP. The aggregator stamps each step with it, the ramp
// plans with it and the reporter builds the run report with it, so the three
// never disagree.
//
// # Step verdicts
//
// A step is inconclusive when it did not measure the server as asked; each
// reason has a code (messages.Reason…):
//
// A producer's lag (the three reasons below) voids only a step that fell
// short of its target: a step that delivered its target held, since the
// server served the rate whatever the generator's delay, and the lag is a
// caveat on its latencies (StepResult.Caveats), which carry it. When the
// lagging producer's target is its own host, the reason says so and its
// remedy is one that can be followed on that host.
//
//   - generator_saturated: a producer fell behind its schedule while using
//     (nearly) all the CPU it may use.
//   - host_overloaded: a producer fell behind because it waited for a CPU (its
//     threads' run delay, or the host's CPU pressure) or its cgroup was
//     throttled: the host is busy with other work.
//   - generator_stalled: a producer fell behind without using CPU or waiting
//     for one: it was stopped (SIGSTOP), frozen or paused.
//   - incomplete: a producer sent no final batch, the step was stopped early,
//     or no producer took part.
//   - shared_id: one producer id ran in two processes at once (their batches'
//     message ids carry different instances): the batches collide, so the
//     counts are not the fleet's. It stands in for rate_mismatch, its effect.
//   - rate_mismatch: the producers' shares add up to more than 2% away from
//     the target rate.
//   - unaddressable: more than 2% of the scheduled commands had nothing to
//     address (an empty INBOX) and were never sent.
//   - setup_unanswered: the server served under ServedShare (10%) of the
//     scheduled commands, and the first set-up stage most sessions did not
//     pass (connect, tls, greeting, login, select) was still unanswered
//     when the window ended: the detail names the stage and what it may
//     mean. (When that stage's attempts failed instead, the step is
//     failing, with the stage and its top error.)
//   - unserved: the server served under ServedShare of the scheduled
//     commands with every set-up passed and no failing share of errors —
//     unless it served some and the rest were never sent because every
//     session was waiting on it: that server is slow (worn by an overload,
//     say), and the step is below.
//   - failing also when the server refused one command at RefusedShare
//     (25%) or more of its attempts (NO or BAD without a response code of
//     load, RFC 5530), however few of all the commands it is.
//   - failing: more than half of the commands the server was sent failed
//     (refused, TLS, authentication, NO/BAD), errors imapload itself caused
//     left out — unless the step held IDLE connections: a server that kept
//     them logged in answers correctly, and its refusals are load.
//
// Otherwise the step held when delivered/target ≥ the threshold, and is below
// it when not. A step holding IDLE connections (RFC 2177) is also below when
// fewer than threshold × those offered were held through the window, or when
// more than HoldFailShare of its new ones failed; Below says which. Only held
// and below steps can be the knee or the last held step.
//
// # Run verdicts
//
// Conclude sums the steps up: knee (a step below with one that held under
// it: the bracket), no_knee (every valid step held), none_held (every
// valid step fell below, down to the lowest rate offered: Bracket gives no
// knee without a held step), failing, or inconclusive; ExitCode maps them
// to the exit codes. A step that re-offered a rate that had held, after a
// step at a higher rate fell below (Rechecks: the ramp's check that the
// server recovered before it bisects), is neither the knee nor the last
// held step: the bracket is the one measured before the overload.
package verdict
