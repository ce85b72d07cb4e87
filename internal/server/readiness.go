package server

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// diskProbe checks that the data root takes a write. Creating a file is
// not enough: a full filesystem still has inodes, so the probe writes a
// block and fsyncs it, as a push would, and removes it again. Its answer
// is kept for every (a statfs of the data root is asked each time), so
// /readyz, which anyone may call, cannot be made to fsync in a loop.
type diskProbe struct {
	root  string
	every time.Duration

	mu      sync.Mutex
	checked time.Time
	err     error
}

// probeSize is written and synced by every probe: one filesystem block.
const probeSize = 4096

func (p *diskProbe) check() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	// statfs is cheap and asked every time, so a file system remounted
	// read-only or filled up shows at once; the write probe is cached.
	if err := statfsCheck(p.root); err != nil {
		return err
	}
	if !p.checked.IsZero() && time.Since(p.checked) < p.every {
		return p.err
	}
	p.err = probeWrite(p.root)
	p.checked = time.Now()
	return p.err
}

func probeWrite(root string) error {
	f, err := os.CreateTemp(root, ".readyz-*")
	if err != nil {
		return diskError(err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, probeSize))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return diskError(err)
}

// diskError is what /readyz says of a failed probe.
func diskError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("data root full")
	}
	return fmt.Errorf("data root not writable")
}
