package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
)

// BenchmarkHTTPUpsert is the full round trip of SPEC endpoint 2 on one
// kept-alive connection: an upsert of one file into a draft holding 10
// files, authenticated by a session (a Redis lookup per request) or by an
// API key. It reports the median and 99th percentile latency. Run it with
//
//	go test ./httpapi -run xxx -bench HTTPUpsert -benchtime 2000x
//
// The store runs with fsync off, as quire serve does by default: an
// acknowledged write has reached the data root (objects written, ref
// renamed into place) and survives a crash of quire, not a power loss.
func BenchmarkHTTPUpsert(b *testing.B) {
	e := testenv.New(b)
	pid := e.CreateProject(e.Admin, "bench")
	sid := e.CreateSkill(e.Admin, pid, "bench")
	e.Must(201, "POST", "/v1/skills/"+sid+"/versions", e.Admin, nil)
	url := e.URL + "/v1/skills/" + sid + "/versions/1/files"
	for i := 0; i < 10; i++ {
		e.Must(200, "POST", "/v1/skills/"+sid+"/versions/1/files", e.Admin, map[string]string{"file_path": fmt.Sprintf("file-%02d.md", i), "content": fmt.Sprintf("file %d\n", i)})
	}
	// Flush the set-up's writes so their writeback does not land in the
	// timed loop.
	syscall.Sync()
	upserts := 0
	for _, cred := range []struct{ name, token string }{
		{"session", e.Admin},
		{"api-key", e.CreateKey(e.Admin, "write")},
	} {
		b.Run(cred.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				body, _ := json.Marshal(map[string]string{"file_path": "file-05.md", "content": fmt.Sprintf("%s revision %d\n", cred.name, upserts+i)})
				req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+cred.token)
				req.Header.Set("Content-Type", "application/json")
				start := time.Now()
				res, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				lat = append(lat, time.Since(start))
				if res.StatusCode != 200 {
					b.Fatalf("status %d", res.StatusCode)
				}
			}
			b.StopTimer()
			upserts += b.N
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e6, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e6, "p99-ms")
		})
	}
	// Every upsert was a commit: the draft's opening, 10 files, then those.
	repo := e.RepoPath("skill", sid)
	if n := testenv.Git(b, repo, "rev-list", "--count", "refs/heads/draft/1"); n != fmt.Sprint(11+upserts) {
		b.Fatalf("%s commits after %d upserts", n, upserts)
	}
}
