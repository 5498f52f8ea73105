//go:build race

package main

// raceEnabled is true under the race detector, whose slowdown turns
// in-process load measurements into measurements of the detector.
const raceEnabled = true
