//go:build race

package client_test

// raceDetector says the tests run with -race.
const raceDetector = true
