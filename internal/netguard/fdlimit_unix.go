//go:build unix

package netguard

import "syscall"

// RaiseFDLimit raises the soft limit on open files to the hard limit and
// returns both. Go (1.19 and later) already does this when a program
// starts; doing it again costs nothing, covers a limit lowered since, and
// gives the server the number its connection caps are sized from.
func RaiseFDLimit() (soft, hard uint64, err error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, err
	}
	if rl.Cur < rl.Max {
		// Only when needed: Setrlimit also stops Go from giving child
		// processes (git) the original soft limit back.
		want := rl
		want.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			return uint64(rl.Cur), uint64(rl.Max), err
		}
		rl = want
	}
	return uint64(rl.Cur), uint64(rl.Max), nil
}
