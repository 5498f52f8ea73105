package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/reporter"
)

func compareCmd() *cobra.Command {
	c := &compareConfig{}
	return bind(&cobra.Command{
		Use:   "compare RUN|REPORT.json|DIR ...",
		Short: "Compare runs: the knee, the last held step and each phase's P99 side by side",
		Long: `Lines runs up in time order and says, run by run, whether the knee and each phase's P99
at the last held step moved by more than the measurement resolves: a knee is only known to
lie between the last rate that held and the first that did not, and a P99 within its
interval. Each argument is a run id, read from the IMAPLOAD_RESULTS stream (its steps'
latest revisions, judged at --threshold), or a report.json file, or a folder holding one.`,
		Example: `  imapload compare r1 r2 r3
  imapload compare imapload-report/demo-20261130-101500 imapload-report/demo-20261130-121500 --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, c, args) },
	}, c)
}

// compareConfig is the configuration of `imapload compare`.
type compareConfig struct {
	JSON      bool    // --json: print the comparison as JSON
	Out       string  // --out: folder for compare.txt, .json and .html, "" for none
	Threshold float64 // --threshold of runs read from NATS
	Phases    string  // --phases whose P99 the table and page show, comma separated, or "all"
	NATS      natsConfig
}

func (c *compareConfig) add(fs *pflag.FlagSet) {
	c.NATS.add(fs)
	fs.BoolVar(&c.JSON, "json", false, "print the comparison as JSON")
	fs.StringVar(&c.Out, "out", "", "also write compare.txt, compare.json and compare.html to this folder")
	fs.Float64Var(&c.Threshold, "threshold", reporter.DefaultThreshold, "delivered/target ratio under which a step is the knee (runs read from NATS)")
	fs.StringVar(&c.Phases, "phases", "login,fetch", "phases whose P99 the table and page show, comma separated (\"all\": every one; the JSON has all)")
}

func (c *compareConfig) validate() error {
	return errors.Join(
		flagErrors(c.NATS.checks(), []error{checkFloat("threshold", c.Threshold, thresholdRule())}),
		checkOut(c.Out))
}

func runCompare(cmd *cobra.Command, c *compareConfig, args []string) error {
	var nc *nats.Conn
	var reports []messages.RunReport
	for _, arg := range args {
		rep, err := loadReport(arg)
		if errors.Is(err, errNotAFile) {
			if nc == nil {
				if nc, err = c.NATS.connect("imapload-compare"); err != nil {
					return err
				}
				defer nc.Close()
			}
			rep, err = fetchReport(cmd.Context(), nc, arg, c.Threshold)
		}
		if err != nil {
			return err
		}
		reports = append(reports, rep)
	}
	cmp := reporter.Compare(reports)
	where := cmd.OutOrStdout()
	if c.JSON { // stdout is the JSON alone; where the files went goes to stderr
		if err := reporter.RenderCompareJSON(where, cmp); err != nil {
			return err
		}
		where = cmd.ErrOrStderr()
	}
	if c.Phases != "all" {
		cmp = cmp.Only(strings.Split(c.Phases, ","))
	}
	if !c.JSON {
		if err := reporter.RenderCompare(where, cmp); err != nil {
			return err
		}
	}
	if c.Out == "" {
		return nil
	}
	files, err := writeCompare(c.Out, cmp)
	printWritten(where, "comparison files", c.Out, files)
	return err
}

var errNotAFile = errors.New("not a report file")

// loadReport reads arg as a report.json file or a folder holding one;
// errNotAFile when arg names neither (it is then a run id).
func loadReport(arg string) (messages.RunReport, error) {
	var rep messages.RunReport
	st, err := os.Stat(arg)
	if err != nil {
		if messages.ValidName(arg) == nil {
			return rep, errNotAFile
		}
		return rep, usage(fmt.Errorf("%s: neither a run id nor a report file: %w", arg, err))
	}
	path := arg
	if st.IsDir() {
		path = filepath.Join(arg, "report.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return rep, err
	}
	r, err := messages.DecodeRunReport(data)
	if err != nil {
		return rep, fmt.Errorf("%s: not a run report (report.json): %v", path, err)
	}
	return *r, nil
}

// fetchReport builds run's report from its step results on NATS.
func fetchReport(ctx context.Context, nc *nats.Conn, run string, threshold float64) (messages.RunReport, error) {
	t := &tailer{out: io.Discard, steps: map[int]messages.StepResult{}}
	if err := t.follow(ctx, nc, run, true, 0); err != nil || len(t.steps) == 0 {
		return messages.RunReport{}, fmt.Errorf("run %s: no step result on %s (%v)", run, messages.ResultsSubject(run), err)
	}
	return reporter.Build(run, slices.Collect(maps.Values(t.steps)), threshold, time.Now()), nil
}

// writeCompare writes the comparison's three files into dir and returns
// the paths written, also on error.
func writeCompare(dir string, c reporter.Comparison) ([]string, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range []struct {
		name   string
		render func(io.Writer, reporter.Comparison) error
	}{{"compare.txt", reporter.RenderCompare}, {"compare.json", reporter.RenderCompareJSON}, {"compare.html", reporter.RenderCompareHTML}} {
		var b strings.Builder
		if err := f.render(&b, c); err != nil {
			return paths, err
		}
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, []byte(b.String()), 0o666); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}
