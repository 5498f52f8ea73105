package messages

// ConnectionsResult is what a step's held IDLE connections (RFC 2177) did,
// pooled over the producers (StepResult.Connections).
type ConnectionsResult struct {
	// Target is the fleet-wide number of connections the step command asked
	// to hold (StepCommand.Connections; with producer_connections, the sum
	// of the producers' shares).
	Target int `json:"target"`
	// Offered is what the producers that took part planned to hold, summed
	// over them (each one's StepInfo.Connections).
	Offered int `json:"offered"`
	// Held is the fewest connections held during the measurement window:
	// the sum over producers of each one's minimum.
	Held uint64 `json:"held"`
	// HeldAtEnd is the connections held when each producer cut its last
	// batch of the window, summed.
	HeldAtEnd uint64 `json:"held_at_end"`
	// Dropped counts held connections that broke during the window (closed
	// by the server, or a re-IDLE that failed); each was set up again.
	Dropped uint64 `json:"dropped"`
	// SetupAttempted and SetupFailed count hold set-ups (dial, login,
	// SELECT, IDLE) started in the window, and those that failed because
	// of the server (errors imapload caused itself left out).
	SetupAttempted uint64 `json:"setup_attempted"`
	SetupFailed    uint64 `json:"setup_failed"`
}

// HeldShare is Held / Offered; 1 when nothing was offered.
func (c *ConnectionsResult) HeldShare() float64 {
	if c == nil || c.Offered <= 0 {
		return 1
	}
	return float64(c.Held) / float64(c.Offered)
}

// HeldRef names the step that held the most connections with the command
// rate intact (RunReport.MostHeld).
type HeldRef struct {
	// Step is the step number.
	Step int `json:"step"`
	// Connections is the connections the step held (ConnectionsResult.Held).
	Connections uint64 `json:"connections"`
	// Target is the connections the step asked for.
	Target int `json:"target"`
	// Rate and Ratio are the step's target command rate and delivered/target.
	Rate  float64 `json:"rate"`
	Ratio float64 `json:"ratio"`
}
