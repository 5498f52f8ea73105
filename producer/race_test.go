//go:build race

package producer_test

// raceEnabled is true when the race detector slows everything down, so
// much that a 2-core machine cannot sustain the offered rates; tests then
// check the accounting but not the delivered throughput.
const raceEnabled = true
