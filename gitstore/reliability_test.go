package gitstore

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/quire/quire"
)

// A reader that read main before a write landed must not roll the shared
// metadata index back to that older commit: the next writer would fail
// its compare-and-swap (409 "metadata changed concurrently") and readers
// would miss records already acknowledged.
func TestMetaIndexNeverGoesBack(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	const writers, each = 4, 12
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for i := 0; i < 4; i++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Projects(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				p := &quire.Project{Name: "P", Slug: fmt.Sprintf("p-%d-%d", w, i)}
				if err := s.CreateProject(ctx, tester, p); err != nil {
					t.Errorf("create project: %v", err)
					return
				}
				if _, err := s.Project(ctx, p.ID); err != nil {
					t.Errorf("project %s just created: %v", p.Slug, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	all, err := s.Projects(ctx)
	if err != nil || len(all) != writers*each {
		t.Fatalf("%d projects (%v), want %d", len(all), err, writers*each)
	}
}
