//go:build race

package aggregator

// raceEnabled is true under the race detector, which slows recording
// tenfold: statistical tests then run a few fleets to exercise the code and
// leave the coverage rate to the normal run.
const raceEnabled = true
