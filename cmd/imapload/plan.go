package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
	"github.com/imapload/imapload/ramp"
)

// runPlan is what a run will do, printed before its first step: an operator
// about to load a production server sees what will hit it, how hard and for
// how long.
type runPlan struct {
	Run        string
	Target     string   // the IMAP server's host:port
	TLS        string   // how the connection is encrypted, in words
	Auth       string   // the login method
	Accounts   string   // how many accounts, and from where
	Producers  string   // who offers the load
	Scrape     []string // the metrics endpoints scraped during each step
	Ramp       ramp.Plan
	Template   messages.StepCommand
	ResultWait time.Duration
	Deliver    string // where deliveries go, "" for nowhere
}

// planSteps are the steps a plan offers when every one holds: its rates
// (commands/s) and, for a connection ramp, the connections held.
func (p runPlan) planSteps() (rates []float64, conns []int) {
	var done []messages.StepResult
	for {
		rate, c, why := p.Ramp.NextStep(done)
		if why != "" {
			return rates, conns
		}
		rates, conns = append(rates, rate), append(conns, c)
		held := messages.StepResult{Step: len(done) + 1, TargetRate: rate, DeliveredRate: rate, Ratio: 1, Verdict: messages.VerdictHeld}
		if c > 0 {
			held.Connections = &messages.ConnectionsResult{Target: c, Offered: c, Held: uint64(c)}
		}
		done = append(done, held)
	}
}

// longest is the most steps the plan runs (a knee at its last rate, then
// every bisection step, within --max-steps) and how long those take.
func (p runPlan) longest(ramped int) (steps int, d time.Duration) {
	steps = ramped
	if len(p.Ramp.Connections) == 0 && p.Ramp.Refine > 0 {
		steps += p.Ramp.Refine + 1 // the re-offer of the last held rate, then the midpoints
	}
	most := p.Ramp.MaxSteps
	if most <= 0 {
		most = ramp.DefaultMaxSteps
	}
	steps = min(steps, most)
	return steps, time.Duration(steps) * p.stepLength()
}

// stepLength is one step's warm-up and window.
func (p runPlan) stepLength() time.Duration {
	return p.Template.WarmupOrDefault() + p.Template.Duration.D()
}

// write prints the plan.
func (p runPlan) write(w io.Writer) {
	rates, conns := p.planSteps()
	steps, d := p.longest(len(rates))
	var b strings.Builder
	fmt.Fprintf(&b, "plan of run %s:\n", p.Run)
	fmt.Fprintf(&b, "  target     %s, %s, log in by %s\n", p.Target, p.TLS, authWords(p.Auth))
	fmt.Fprintf(&b, "  accounts   %s\n", p.Accounts)
	fmt.Fprintf(&b, "  producers  %s\n", p.Producers)
	if len(p.Scrape) > 0 {
		fmt.Fprintf(&b, "  observing  %s, during every step\n", strings.Join(p.Scrape, ", "))
	}
	p.writeRates(&b, rates, conns)
	if r := p.Template.DeliverRate; r > 0 {
		fmt.Fprintf(&b, "  delivering %s messages/s by %s, in every step\n", num(r), p.Deliver)
	}
	fmt.Fprintf(&b, "  each step  warm-up %v + window %v\n", p.Template.WarmupOrDefault(), p.Template.Duration.D())
	fmt.Fprintf(&b, "  longest    %d steps × %v = %v, plus up to --result-wait %v per step if results are late\n",
		steps, p.stepLength(), d, p.ResultWait)
	_, _ = io.WriteString(w, b.String())
}

// writeRates prints the rates in order, the most the plan offers and how
// far past the knee it goes.
func (p runPlan) writeRates(b *strings.Builder, rates []float64, conns []int) {
	if len(p.Ramp.Connections) > 0 {
		fmt.Fprintf(b, "  steps      %s held IDLE connections, at a fixed %s commands/s\n", listInts(conns), num(p.Ramp.Rate))
	} else {
		fmt.Fprintf(b, "  rates      %s commands/s, in this order\n", listRates(rates))
	}
	most := "no step"
	if n := len(rates); n > 0 {
		most = num(rates[n-1]) + " commands/s"
		if c := conns[n-1]; c > 0 {
			most += fmt.Sprintf(" with %d connections", c)
		}
	}
	fmt.Fprintf(b, "  at most    %s (the last step, if every one holds); it stops %s past the knee", most, plural(p.Ramp.AfterKnee, "step"))
	if p.Ramp.Refine > 0 && len(p.Ramp.Connections) == 0 {
		fmt.Fprintf(b, ", then re-offers the last held rate and bisects %s between it and the knee", plural(p.Ramp.Refine, "step"))
	}
	fmt.Fprintf(b, ", never above %s× the highest rate that held\n", num(maxJump(p.Ramp)))
}

// authWords names the login method as the server sees it.
func authWords(method string) string {
	if method == producer.AuthPlain {
		return "AUTHENTICATE PLAIN (--auth plain)"
	}
	return "LOGIN (--auth login)"
}

func maxJump(p ramp.Plan) float64 {
	if p.MaxJump == 0 {
		return ramp.DefaultMaxJump
	}
	return p.MaxJump
}

func listRates(rates []float64) string {
	s := make([]string, len(rates))
	for i, r := range rates {
		s[i] = strconv.FormatFloat(math.Round(r*100)/100, 'f', -1, 64)
	}
	return strings.Join(s, ", ")
}

func listInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// plan is the plan of run's flags, with ro's ramp and accounts accounts.
func (c *runConfig) plan(run string, ro ramp.Options, accounts int) runPlan {
	return runPlan{Run: run, Target: c.IMAP, TLS: c.tlsWords(), Auth: c.Producer.Auth, Deliver: c.Deliver.target(),
		Accounts: c.Producer.accountWords(accounts), Producers: c.Fleet.words(c.NATS.URL, c.Fleet.Producers == runtime.NumCPU()),
		Scrape: c.Scrape.URLs, Ramp: ro.Plan, Template: ro.Template, ResultWait: ro.ResultWait}
}

// tlsWords says how the connection to the server is protected.
func (c *imapConnFlags) tlsWords() string {
	var s string
	switch {
	case c.TLS:
		s = "implicit TLS (--tls)"
	case c.StartTLS:
		s = "STARTTLS (--starttls)"
	default:
		return "no TLS: plain IMAP, passwords in clear text"
	}
	switch {
	case c.TLSInsecure:
		return s + ", certificate NOT verified (--tls-insecure)"
	case c.TLSCA != "":
		return s + ", trusting the CA of " + c.TLSCA
	}
	return s + ", verified against the system's CAs"
}

// accountWords says how many accounts there are and where they come from,
// and how many sessions may use them.
func (p *producerFlags) accountWords(n int) string {
	from := "from " + p.AccountsFile
	if p.AccountsFile == "" {
		from = fmt.Sprintf(p.AccountsTemplate, 1) + " … " + fmt.Sprintf(p.AccountsTemplate, n) + " (--accounts-template)"
	}
	return fmt.Sprintf("%d %s; up to %d sessions per producer, %d per account", n, from, p.Sessions, p.SessionsPerAccount)
}

// words says who offers the load.
func (f *fleetFlags) words(nats string, perCore bool) string {
	s := plural(f.Producers, "producer") + " in this process"
	if perCore {
		s += " (one per core)"
	}
	switch {
	case nats != "":
		s += fmt.Sprintf(", and every producer on %s (at least %d more)", bus.Redact(nats), f.ExpectProducers)
	case f.Listen != "":
		s += fmt.Sprintf(", and %d more expected from other hosts (--listen %s)", max(f.ExpectProducers, 1), f.Listen)
	}
	return s
}
