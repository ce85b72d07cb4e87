//go:build unix

package render

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used: on a busy machine a
// benchmark's wall time measures the neighbours as much as the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
