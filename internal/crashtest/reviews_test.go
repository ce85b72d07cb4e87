package crashtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCrashReviews SIGKILLs quire while workers comment on one review,
// give verdicts, move labels and write files into the reviewed draft
// (each write moves the review's head), and checks after each restart
// that every acknowledged comment, verdict, label move and head move is
// there (in the API, in the label history, and as a "head moved" commit
// on refs/reviews/1), that the review's head is the draft's, that a
// second editor with an acknowledged write stays one of the draft's
// authors (their approval does not count), and that
// every repository passes git fsck --strict. The kill comes once a random number of writes were
// acknowledged, so the test waits on answers, not on a clock.
func TestCrashReviews(t *testing.T) {
	bin := quireBinary(t)
	root := t.TempDir()
	srv, err := startServer(t, bin, root, true, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if srv != nil {
			srv.kill()
		}
	}()
	c := newClient(srv.URL, "")
	defer c.close()
	step := func(method, path string, body any, want int) *reply {
		t.Helper()
		r, err := c.call(method, path, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := expect(r, want, method+" "+path); err != nil {
			t.Fatal(err)
		}
		return r
	}
	var login struct{ Token string }
	step("POST", "/v1/auth/login", map[string]string{"email": adminEmail, "password": adminPassword}, 200).decode(&login)
	c = c.with(login.Token)
	var key struct{ Token string }
	step("POST", "/v1/api-keys", map[string]string{"name": "reviews", "scope": "admin"}, 201).decode(&key)
	c = c.with(key.Token)
	step("POST", "/v1/projects", map[string]string{"name": "Crash", "slug": "crash"}, 201)
	step("POST", "/v1/projects/crash/skills", map[string]string{"name": "Doc", "slug": "doc"}, 201)
	step("POST", "/v1/skills/doc/versions", nil, 201)
	step("POST", "/v1/skills/doc/versions/1/files", map[string]string{"file_path": "SKILL.md", "content": manifest("doc", "one")}, 200)
	step("POST", "/v1/skills/doc/versions/1/publish", nil, 200)
	step("POST", "/v1/skills/doc/versions", nil, 201)
	step("POST", "/v1/skills/doc/versions/2/files", map[string]string{"file_path": "SKILL.md", "content": manifest("doc", "two")}, 200)
	step("POST", "/v1/skills/doc/versions/2/reviews", map[string]string{"title": "crash"}, 201)
	// A second editor writes too, through a key of theirs: once a write of
	// theirs is acknowledged they are one of the draft's authors, and so
	// after any crash their own approval must not count.
	var writer struct{ User struct{ ID string } }
	step("POST", "/v1/users", map[string]string{"email": "writer@example.com", "password": "writer-password"}, 201).decode(&writer)
	step("PUT", "/v1/projects/crash/members/"+writer.User.ID, map[string]string{"role": "editor"}, 200)
	var wlogin, wkey struct{ Token string }
	wc := newClient(srv.URL, "")
	if r, err := wc.call("POST", "/v1/auth/login", map[string]string{"email": "writer@example.com", "password": "writer-password"}); err != nil || expect(r, 200, "writer login") != nil {
		t.Fatalf("writer login: %v %v", err, r)
	} else {
		r.decode(&wlogin)
	}
	if r, err := wc.with(wlogin.Token).call("POST", "/v1/api-keys", map[string]string{"name": "w", "scope": "write"}); err != nil || expect(r, 201, "writer key") != nil {
		t.Fatalf("writer key: %v %v", err, r)
	} else {
		r.decode(&wkey)
	}
	wc.close()
	var writerWrote atomic.Bool // an acknowledged write by the writer

	var (
		mu       sync.Mutex
		comments []string         // acknowledged comment ids
		labels   = map[int]bool{} // acknowledged label moves, by worker
		heads    []string         // acknowledged draft commits
		verdicts atomic.Int64
	)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 17))
	t.Logf("seed %d", seed)
	const rounds, workers = 3, 8
	for round := 0; round < rounds; round++ {
		acked := make(chan struct{}, 1<<16)
		killAt := 20 + rng.IntN(60)
		var wg sync.WaitGroup
		for i := 0; i < workers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ; k++ {
					var r *reply
					var err error
					switch k % 5 {
					case 0, 1:
						r, err = c.call("POST", "/v1/skills/doc/reviews/1/comments", map[string]any{"body": fmt.Sprintf("r%d w%d k%d", round, i, k), "path": "SKILL.md", "line": 1})
						if err == nil && r.status == 201 {
							var out struct{ Comment struct{ ID string } }
							if r.decode(&out) == nil {
								mu.Lock()
								comments = append(comments, out.Comment.ID)
								mu.Unlock()
							}
						}
					case 2:
						r, err = c.call("POST", "/v1/skills/doc/reviews/1/approve", nil)
						if err == nil && r.status == 201 {
							verdicts.Add(1)
						}
					case 3:
						r, err = c.call("PUT", fmt.Sprintf("/v1/skills/doc/labels/env-%d", i), map[string]any{"version": 1})
						if err == nil && r.status == 200 {
							mu.Lock()
							labels[i] = true
							mu.Unlock()
						}
					case 4:
						by := c
						if i%2 == 1 {
							by = c.with(wkey.Token)
						}
						r, err = by.call("POST", "/v1/skills/doc/versions/2/files", map[string]string{"file_path": fmt.Sprintf("notes/w%d.md", i), "content": fmt.Sprintf("r%d k%d\n", round, k)})
						if err == nil && r.status == 200 && i%2 == 1 {
							writerWrote.Store(true)
						}
						if err == nil && r.status == 200 {
							var out struct{ Version struct{ Commit string } }
							if r.decode(&out) == nil {
								mu.Lock()
								heads = append(heads, out.Version.Commit)
								mu.Unlock()
							}
						}
					}
					if err != nil {
						return // the server died
					}
					if r.status >= 300 && r.status != 409 { // 409: a concurrent change; retry
						t.Errorf("worker %d: %d %s", i, r.status, r.body)
						return
					}
					acked <- struct{}{}
				}
			}()
		}
		finished := make(chan struct{})
		go func() {
			wg.Wait()
			close(finished)
		}()
		for n := 0; n < killAt; n++ {
			select {
			case <-acked:
			case <-finished:
				t.Fatalf("round %d: the workers stopped before the kill", round)
			}
		}
		srv.kill()
		<-finished
		if rep, err := checkDisk(root); err != nil {
			t.Fatalf("round %d, after SIGKILL: %v", round, err)
		} else if len(rep.refLocks) > 0 {
			t.Fatalf("round %d: lock files under refs/: %v", round, rep.refLocks)
		}
		if srv, err = startServer(t, bin, root, true, true); err != nil {
			t.Fatal(err)
		}
		c = newClient(srv.URL, key.Token)

		var got struct {
			Comments []struct{ ID string }
			Verdicts []struct{ Kind string }
		}
		step("GET", "/v1/skills/doc/reviews/1", nil, 200).decode(&got)
		have := map[string]bool{}
		for _, cm := range got.Comments {
			have[cm.ID] = true
		}
		var lost []string
		for _, id := range comments {
			if !have[id] {
				lost = append(lost, id)
			}
		}
		if len(lost) > 0 {
			t.Fatalf("round %d: %d acknowledged comments lost of %d: %v", round, len(lost), len(comments), lost)
		}
		if verdicts.Load() > 0 && !slices.ContainsFunc(got.Verdicts, func(v struct{ Kind string }) bool { return v.Kind == "approve" }) {
			t.Fatalf("round %d: acknowledged approval lost", round)
		}
		var ls struct{ Labels []struct{ Name string } }
		step("GET", "/v1/skills/doc/labels", nil, 200).decode(&ls)
		for i := range labels {
			name := fmt.Sprintf("env-%d", i)
			if !slices.ContainsFunc(ls.Labels, func(l struct{ Name string }) bool { return l.Name == name }) {
				t.Fatalf("round %d: acknowledged label %s lost: %v", round, name, ls.Labels)
			}
			step("GET", "/v1/skills/doc/labels/"+name+"/history", nil, 200)
		}
		var draft struct{ Version struct{ Commit string } }
		step("GET", "/v1/skills/doc/versions/2", nil, 200).decode(&draft)
		var rv struct {
			Review struct{ Head struct{ Commit string } }
		}
		step("GET", "/v1/skills/doc/reviews/1", nil, 200).decode(&rv)
		if rv.Review.Head.Commit != draft.Version.Commit {
			t.Fatalf("round %d: review head %s, draft at %s", round, rv.Review.Head.Commit, draft.Version.Commit)
		}
		recorded, err := recordedHeads(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range heads {
			if !recorded[h] {
				t.Fatalf("round %d: acknowledged draft commit %s has no head move on refs/reviews/1", round, h)
			}
		}
		if writerWrote.Load() {
			step("POST", "/v1/skills/doc/reviews/1/approve", nil, 201) // the admin's key: an author too
			r, err := c.with(wkey.Token).call("POST", "/v1/skills/doc/reviews/1/approve", nil)
			if err != nil || expect(r, 201, "the writer's approval") != nil {
				t.Fatalf("round %d: the writer's approval: %v %v", round, err, r)
			}
			var v struct {
				Verdicts []struct {
					User   struct{ Email string }
					Counts bool
					Reason string
				}
			}
			step("GET", "/v1/skills/doc/reviews/1", nil, 200).decode(&v)
			for _, vd := range v.Verdicts {
				if vd.Counts || vd.Reason != "self_approval" {
					t.Fatalf("round %d: %s's approval of a draft they wrote to: counts %v, reason %q", round, vd.User.Email, vd.Counts, vd.Reason)
				}
			}
		}
		t.Logf("round %d: killed after %d acknowledged writes; %d comments, %d labels, %d head moves, the writer's authorship hold", round, killAt, len(comments), len(labels), len(heads))
	}
	if err := srv.stop(); err != nil {
		t.Error(err)
	}
	srv = nil
	if _, err := checkDisk(root); err != nil {
		t.Fatal(errors.Join(errors.New("after the final stop"), err))
	}
}

// recordedHeads returns the heads the head-move commits of refs/reviews/1
// record (their "Head:" trailer), in the one repository under root that
// has that review.
func recordedHeads(root string) (map[string]bool, error) {
	repos, err := findRepos(root, &diskReport{})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, repo := range repos {
		if _, err := git(repo, nil, "rev-parse", "--verify", "-q", "refs/reviews/1"); err != nil {
			continue
		}
		log, err := git(repo, nil, "log", "--format=%s%x00%(trailers:key=Head,valueonly)", "refs/reviews/1")
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(log), "\n") {
			subject, head, ok := strings.Cut(line, "\x00")
			if ok && strings.HasPrefix(subject, "Move head of review 1 ") {
				out[strings.TrimSpace(head)] = true
			}
		}
		return out, nil
	}
	return nil, errors.New("no repository has refs/reviews/1")
}
