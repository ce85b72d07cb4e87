package server

import (
	"fmt"
	"syscall"
)

// stRDOnly is ST_RDONLY of statfs(2)'s f_flags.
const stRDOnly = 0x1

// statfsCheck reports a data root on a read-only mount, or one with less
// than a probe's worth of space free.
func statfsCheck(root string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil {
		return fmt.Errorf("data root not writable")
	}
	if st.Flags&stRDOnly != 0 {
		return fmt.Errorf("data root not writable")
	}
	if uint64(st.Bavail)*uint64(st.Bsize) < probeSize {
		return fmt.Errorf("data root full")
	}
	return nil
}
