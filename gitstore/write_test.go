package gitstore

import (
	"context"
	"testing"

	"github.com/quire/quire"
)

// TestHooksRunAfterLock checks that every write of the version engine
// runs the change hooks once the repository's lock is released: a hook
// that takes the lock itself (as a cache refill or a repack may) must
// get it, not wait behind the write that called it.
func TestHooksRunAfterLock(t *testing.T) {
	s := newTestStore(t)
	a := newTestSkill(t, s)
	ctx := context.Background()
	calls, locked := 0, 0
	s.OnChange(func(kind quire.Kind, id string) {
		if id != a.ID {
			return
		}
		calls++
		unlock, ok := s.locks.tryLock(s.RepoPath(a))
		if !ok {
			locked++
			return
		}
		unlock()
	})
	file := []quire.FileContent{{Path: "SKILL.md", Content: []byte("---\nname: s\ndescription: d\n---\n")}}
	steps := []func() error{
		func() error { _, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, file); return err },
		func() error {
			_, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: "b.md", Content: []byte("b")}}, "", "")
			return err
		},
		func() error { _, err := s.DeleteFile(ctx, tester, a, 1, "b.md", ""); return err },
		func() error { _, err := s.PublishVersion(ctx, tester, a, 1, nil); return err },
		func() error { _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, nil); return err },
		func() error { return s.DeleteVersion(ctx, tester, a, 2) },
		func() error { _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, nil); return err },
		func() error { _, err := s.ArchiveVersion(ctx, tester, a, 3); return err },
	}
	for i, step := range steps {
		before := calls
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if calls == before {
			t.Errorf("step %d ran no hook", i)
		}
	}
	if locked > 0 {
		t.Fatalf("%d of %d hooks ran under the repository lock", locked, calls)
	}
}
