//go:build race

package web_test

// raceDetector says the tests run with -race.
const raceDetector = true
