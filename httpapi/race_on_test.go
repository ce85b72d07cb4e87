//go:build race

package httpapi_test

// raceDetector says the tests run with -race (race_off_test.go).
const raceDetector = true
