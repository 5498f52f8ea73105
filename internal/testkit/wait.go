package testkit

import (
	"testing"
	"time"
)

// pollEvery is how often Poll and WaitFor check their condition: often enough
// that a test does not wait long after it holds, seldom enough to leave the
// CPU to the code under test.
const pollEvery = 10 * time.Millisecond

// WaitFor polls cond until it holds, and fails t (Fatal) if it still does not
// hold after within, naming what it waited for. Tests poll with a deadline
// instead of sleeping a guessed time.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(within, cond) {
		t.Fatalf("timed out after %v waiting for %s", within, what)
	}
}

// Poll polls cond until it holds (true) or within has passed (false), for a
// caller that reports the timeout itself, such as a helper returning an error.
func Poll(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}
