package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/imapload/imapload/seed"
)

// What `imapload seed` prints: the plan before, a progress line every
// second on stderr, a summary at the end, and failed accounts grouped by
// error. Bytes are in MB (10^6), as rates usually are.

func printSeedPlan(w io.Writer, o seed.Options) {
	parts := make([]string, len(o.Targets))
	for i, t := range o.Targets {
		parts[i] = fmt.Sprintf("%s %d", t.Folder, t.Count)
	}
	fmt.Fprintf(w, "seed: %d accounts, each to hold %s; %d at once\n",
		len(o.Accounts), strings.Join(parts, ", "), max(o.Concurrency, 1))
}

func progressLine(st seed.Stats) string {
	secs := max(st.Elapsed.Seconds(), 1e-9)
	return fmt.Sprintf("accounts %d/%d done (%d failed), %d messages, %s appended, %.0f messages/s, %.1f MB/s",
		st.Done, st.Accounts, st.Failed, st.Messages, megabytes(st.Bytes), float64(st.Messages)/secs, float64(st.Bytes)/1e6/secs)
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func printSeedSummary(w io.Writer, sum seed.Summary) {
	fmt.Fprintf(w, "seed: %s in %s\n", progressLine(sum.Stats), sum.Elapsed.Round(time.Millisecond))
	if sum.Created > 0 {
		fmt.Fprintf(w, "seed: %d folders created\n", sum.Created)
	}
	if sum.Full > 0 {
		fmt.Fprintf(w, "seed: %d accounts already held their targets: nothing appended to them\n", sum.Full)
	}
	for _, g := range sum.Errors {
		more := ""
		if g.Accounts > len(g.Examples) {
			more = ", …"
		}
		fmt.Fprintf(w, "seed: %d accounts failed: %s (%s%s)\n", g.Accounts, g.Err, strings.Join(g.Examples, ", "), more)
	}
}

// seedError is the command's error for what Run returned.
func seedError(sum seed.Summary, err error) error {
	left := sum.Accounts - sum.Done - sum.Failed
	switch {
	case err == nil:
		return nil
	case errors.Is(err, seed.ErrInterrupted):
		return fmt.Errorf("interrupted with %d accounts not done; what was appended stays: run the same command again to continue", left)
	case sum.GaveUp:
		return fmt.Errorf("gave up after the first %d accounts failed (%s): check --imap, the TLS flags and the passwords", sum.Failed, firstError(sum))
	case errors.Is(err, seed.ErrAccounts):
		return fmt.Errorf("%d of %d accounts failed (%s)", sum.Failed, sum.Accounts, firstError(sum))
	}
	return err
}

func firstError(sum seed.Summary) string {
	if len(sum.Errors) == 0 {
		return "no error recorded"
	}
	return sum.Errors[0].Err
}
