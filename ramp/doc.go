// Package ramp drives a run step by step: it publishes each step command on
// messages.StepSubject as a request (so it knows how many producers accepted),
// waits for the aggregator's messages.StepResult on messages.ResultsSubject,
// judges it (package verdict) and decides the next offered rate.
//
// The plan is pure (see Plan): rates rise by a factor from a start rate (or
// follow an explicit list) until the knee — the first valid step whose
// delivered/target ratio falls below the threshold — plus AfterKnee more
// steps; with Refine > 0 it then bisects between the highest rate that held
// and the lowest that fell below, never offering a midpoint twice. When the
// first step already falls below, it steps down instead (divided by the
// factor, never under Min) until a step holds, so that a run ends with a
// bracket or says that no rate down to Min held. Before the bisection that
// follows an overload it re-offers the highest rate that held, and bisects
// only when that holds again; a step that follows one below at a lower
// rate is preceded by a cool-down at no load (Options.Cooldown). It stops
// safely: at the first inconclusive step (saying why), at Max, after
// MaxSteps, and never beyond MaxJump (8) times the highest rate that held.
// Impossible settings are refused by Plan.Validate before anything is sent.
//
// When the producers that accept a step divided the rate by a count other
// than their own number (one left, or a stale registry entry), the controller
// re-issues the step at once under the next step number with that number, so
// that the fleet offers the target; the first one ends stopped early.
package ramp
