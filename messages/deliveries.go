package messages

// Arrivals counts, in one batch, what became of deliveries whose intended
// start fell in the measurement window and that went to an account with a
// held IDLE connection of the step (RFC 2177): each was looked for on that
// connection by its Message-ID, fetched after the EXISTS that announced it.
type Arrivals struct {
	// Watched counts accepted deliveries to an account with a held
	// connection: each is then either seen or missing.
	Watched uint64 `msgpack:"watched" json:"watched"`
	// Seen counts those that showed on a held connection (phase inbox
	// holds their time to inbox).
	Seen uint64 `msgpack:"seen" json:"seen"`
	// Missing counts those never seen within the inbox timeout (an error
	// of phase inbox each).
	Missing uint64 `msgpack:"missing" json:"missing"`
	// Duplicates counts sightings of a delivery already seen: the same
	// message delivered twice.
	Duplicates uint64 `msgpack:"duplicates" json:"duplicates"`
}

// Add adds o's counts to a.
func (a *Arrivals) Add(o Arrivals) {
	a.Watched += o.Watched
	a.Seen += o.Seen
	a.Missing += o.Missing
	a.Duplicates += o.Duplicates
}

// validate checks that the counts cannot have wrapped. Seen and Missing
// may be counted in a later batch than their delivery, so no count bounds
// another within one batch.
func (a *Arrivals) validate(bad func(string, ...any)) {
	if wrapped(a.Watched, a.Seen, a.Missing, a.Duplicates) {
		bad("arrivals: watched %d, seen %d, missing %d, duplicates %d out of range", a.Watched, a.Seen, a.Missing, a.Duplicates)
	}
}

// DeliveriesResult is what a step's deliveries did, pooled over the
// producers (StepResult.Deliveries). Rates are in deliveries per second.
type DeliveriesResult struct {
	// TargetRate is the step command's fleet-wide DeliverRate.
	TargetRate float64 `json:"target_rate"`
	// OfferedRate is what the producers that took part planned to deliver,
	// summed over them (each one's StepInfo.DeliverRate).
	OfferedRate float64 `json:"offered_rate"`
	// DeliveredRate is the deliveries accepted whose intended start fell in
	// the window, divided by the window's length.
	DeliveredRate float64 `json:"delivered_rate"`
	// Ratio is DeliveredRate / TargetRate.
	Ratio float64 `json:"ratio"`
	// Scheduled counts deliveries scheduled in the window; Accepted those
	// the server accepted for their recipient; Failed those refused or
	// broken off (phase deliver's errors); Dropped those never sent (no
	// free delivery slot).
	Scheduled uint64 `json:"scheduled"`
	Accepted  uint64 `json:"accepted"`
	Failed    uint64 `json:"failed"`
	Dropped   uint64 `json:"dropped"`
	// Arrivals is what became of the accepted deliveries to accounts with a
	// held IDLE connection: the integrity of what was delivered (each
	// should arrive, once).
	Arrivals
}

// Intact reports whether every watched delivery arrived, once.
func (d *DeliveriesResult) Intact() bool {
	return d.Missing == 0 && d.Duplicates == 0
}

// DeliverShareFor is the deliver rate one producer offers, deliveries/s:
// DeliverRate divided as ShareFor divides Rate (by Producers if set, else
// by live); ProducerRate does not apply to it.
func (c StepCommand) DeliverShareFor(live int) float64 {
	switch {
	case c.Producers > 0:
		return c.DeliverRate / float64(c.Producers)
	case live > 0:
		return c.DeliverRate / float64(live)
	default:
		return c.DeliverRate
	}
}
