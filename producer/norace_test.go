//go:build !race

package producer_test

// raceEnabled: see race_test.go.
const raceEnabled = false
