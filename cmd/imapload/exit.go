package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// exitError carries the exit code an error calls for (verdict.Exit…).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usage marks err as a usage error: impossible flags, nothing was sent.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: verdict.ExitUsage, err: err}
}

// exitCode is the process exit code for what a command returned.
func exitCode(err error) int {
	var e *exitError
	switch {
	case err == nil:
		return verdict.ExitOK
	case errors.As(err, &e):
		return e.code
	case strings.HasPrefix(err.Error(), "unknown command "):
		return verdict.ExitUsage // cobra's, with its suggestions, found before any hook of ours runs
	}
	return verdict.ExitError
}

// markUsage makes cobra's flag and argument errors usage errors.
func markUsage(root *cobra.Command) {
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usage(suggestFlag(cmd, err)) })
	for _, c := range root.Commands() {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error { return usage(args(cmd, a)) }
		}
	}
}

// verdictError is the error a finished run's report calls for, nil when it
// reached a verdict and met every threshold.
func verdictError(r messages.RunReport) error {
	code := verdict.ExitCode(r)
	var msg string
	switch code {
	case verdict.ExitOK:
		return nil
	case verdict.ExitFailing:
		msg = "the server is not answering correctly: " + reasonText(r.Reasons)
	case verdict.ExitInconclusive:
		msg = "inconclusive, no verdict: " + reasonText(r.Reasons)
	case verdict.ExitNoneHeld:
		msg = "no rate held: " + reasonText(r.Reasons)
	default:
		var failed []string
		for _, t := range r.Thresholds {
			if !t.Pass {
				failed = append(failed, fmt.Sprintf("%s (%s)", t.Name, t.Detail))
			}
		}
		msg = "threshold failed: " + strings.Join(failed, "; ")
	}
	return &exitError{code: code, err: fmt.Errorf("%s (exit %d)", msg, code)}
}

// reasonText joins reasons' codes and details; their remedies were printed
// with the steps, once.
func reasonText(rs []messages.Reason) string {
	var parts []string
	for _, x := range rs {
		parts = append(parts, fmt.Sprintf("%s: %s", x.Code, x.Detail))
	}
	return strings.Join(parts, "; ")
}
