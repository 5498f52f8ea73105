// Package ramp drives a run step by step: it publishes each step command on
// messages.StepSubject as a request (so it knows how many producers accepted),
// waits for the aggregator's messages.StepResult on messages.ResultsSubject,
// and decides the next offered rate.
//
// The plan is pure (see Plan): rates double from a start rate (or follow an
// explicit list) until the knee — the first step whose delivered/target ratio
// falls below the threshold on a step whose generators kept up — plus
// AfterKnee more steps, or until a maximum. With Refine > 0 it then bisects
// between the last step that held and the knee.
package ramp
