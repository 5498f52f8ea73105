//go:build !race

package aggregator

// raceEnabled: see race_test.go.
const raceEnabled = false
