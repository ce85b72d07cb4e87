// Package crashtest holds quire's crash-safety and disk-fault tests. They
// build the real quire binary, run it as a subprocess, SIGKILL it while it
// is answering writes, and check that every write it acknowledged survives
// and that every repository under the data root passes git fsck --strict.
//
// The package has no code outside its tests. Run more trials than CI does
// with
//
//	QUIRE_CRASH_TRIALS=300 go test -run TestCrash -timeout 60m ./internal/crashtest
//
// or -args -crash.trials=300 (QUIRE_CRASH_RACE=1 builds the server with
// -race); docs/reliability.md describes what is checked.
package crashtest
