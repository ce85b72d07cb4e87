package gitstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/quire/quire"
)

// BenchmarkReviewHead measures what head moves add to a draft write:
// "lookup" is the check every draft write makes for an open review when
// there is none (the upsert hot path's only added cost: one failed ref
// open), "upsert/review=none" and "upsert/review=open" an upsert into a
// 10-file draft without and with an open review (which then also
// commits the head move).
//
//	go test ./gitstore -run xxx -bench ReviewHead -benchtime 500x
func BenchmarkReviewHead(b *testing.B) {
	ctx := context.Background()
	b.Run("lookup", func(b *testing.B) {
		s, a := benchDraft(b, 10, false)
		r, err := s.assetRepo(a)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if rv, _, err := r.indexedReview(1); err != nil || rv != nil {
				b.Fatal(rv, err)
			}
		}
	})
	for _, open := range []bool{false, true} {
		name := "upsert/review=none"
		if open {
			name = "upsert/review=open"
		}
		b.Run(name, func(b *testing.B) {
			s, a := benchDraft(b, 10, false)
			if open {
				if _, err := s.OpenReview(ctx, tester, a, &quire.Review{Version: 1, Title: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
			path := benchPath(5)
			upsertLoop(b, s, a, path)
			if open {
				if got := gitCLI(b, s.RepoPath(a), "rev-list", "--count", "refs/reviews/1"); got != fmt.Sprint(b.N+1) {
					b.Fatalf("%s review commits after %d upserts", got, b.N)
				}
			}
		})
	}
}
