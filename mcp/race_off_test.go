//go:build !race

package mcp_test

// raceDetector says the tests run with -race.
const raceDetector = false
