//go:build race

package crashtest

// raceEnabled builds the server under test with -race when the tests run
// with it, so data races in the server fail the harness too.
const raceEnabled = true
