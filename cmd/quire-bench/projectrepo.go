package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/bench"
)

// projectRepoSection measures what keeping each project's repository up
// to date costs a publish: two servers, one keeping project repositories
// and one not (bench.Options.NoProjectRepos), each with a project of 20
// ten-file skills; a new version of one skill published over HTTP,
// alternated between the servers round by round. The first server's
// view changes are applied by its background worker; how long one takes
// is measured too, as the time from the publish to the commit on the
// project repository.
func projectRepoSection(ctx context.Context, c *config, r *report) error {
	type side struct {
		q      *bench.Quire
		skills []*quire.Asset
		lat    []time.Duration
	}
	const skills = 20
	var with, without side
	for _, s := range []*side{&with, &without} {
		q, err := bench.Start(ctx, bench.Options{RedisURL: c.redis, NoProjectRepos: s == &without})
		if err != nil {
			return err
		}
		defer q.Close()
		s.q = q
		for i := range skills {
			a, err := draft(ctx, q, fmt.Sprintf("proj-%02d", i), 10)
			if err != nil {
				return err
			}
			if err := q.Call("POST", "/v1/skills/"+a.ID+"/versions/1/publish", q.Admin, nil, nil); err != nil {
				return err
			}
			s.skills = append(s.skills, a)
		}
	}
	projRepo := with.q.Store.RepoPath(quire.ProjectRepo(with.q.ProjectID))
	var applied []time.Duration
	for i := range 2 * c.publishes {
		s := &with
		if i%2 == 1 {
			s = &without
		}
		a := s.skills[(i/2)%skills]
		v, err := s.q.Store.CreateVersion(ctx, benchActor, a, quire.Base{}, []quire.FileContent{{Path: "file-05.md", Content: []byte(fmt.Sprintf("round %d\n", i))}})
		if err != nil {
			return err
		}
		before, _ := os.ReadFile(filepath.Join(projRepo, "refs", "heads", "main"))
		start := time.Now()
		if err := s.q.Call("POST", fmt.Sprintf("/v1/skills/%s/versions/%d/publish", a.ID, v.Number), s.q.Admin, nil, nil); err != nil {
			return err
		}
		s.lat = append(s.lat, time.Since(start))
		if s == &with {
			// The view catches up: wait for its commit (main moves)
			// before the next round.
			for {
				now, _ := os.ReadFile(filepath.Join(projRepo, "refs", "heads", "main"))
				if !bytes.Equal(now, before) {
					break
				}
				if time.Since(start) > 30*time.Second {
					return fmt.Errorf("the project repository did not record the publish of %s v%d", a.Slug, v.Number)
				}
				time.Sleep(200 * time.Microsecond)
			}
			applied = append(applied, time.Since(start))
		}
	}
	r.section("Project repository", fmt.Sprintf(`A publish of a new version of one skill, over HTTP, in a project of %d
ten-file skills: on a server keeping the project's repository (docs/clients.md,
"One repository per project") and on one that keeps none, %d publishes each,
alternated. The view's change is applied by a background worker, in order,
once the publish has answered (quire.InRequest); "publish to view" is how long
after the request began the project repository's main had moved (its ref read
every 0.2 ms).`, skills, c.publishes))
	p50w, p50o := pctl(with.lat, 50), pctl(without.lat, 50)
	rows := []row{
		{figure: "publish: p50", quire: ms(p50w), baseline: ms(p50o), ratio: ratio(p50w, p50o), goal: "≤ 1.30x", pass: ratio(p50w, p50o) <= 1.3},
		{figure: "publish: p99", quire: ms(pctl(with.lat, 99)), baseline: ms(pctl(without.lat, 99)), ratio: ratio(pctl(with.lat, 99), pctl(without.lat, 99))},
	}
	if len(applied) > 0 {
		rows = append(rows, row{figure: "publish to view: p50", quire: ms(pctl(applied, 50)), baseline: ms(p50o), ratio: ratio(pctl(applied, 50), p50o)})
	}
	r.table("no project repository", rows)
	return nil
}
