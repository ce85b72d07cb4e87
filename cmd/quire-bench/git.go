package main

import (
	"context"
	"fmt"
	"net/http/cgi"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/internal/bench"
)

// gitSection measures a mirror clone and an incremental fetch from quire
// and from C git's http-backend serving the same bare repository.
func gitSection(ctx context.Context, c *config, r *report) error {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return fmt.Errorf("git binary: %w", err)
	}
	// The background repacker stays out of the measurement.
	q, err := bench.Start(ctx, bench.Options{RedisURL: c.redis, Git: gitstore.GitOptions{RepackPacks: 1 << 20, RepackLoose: 1 << 30}})
	if err != nil {
		return err
	}
	defer q.Close()
	a, err := bigSkill(ctx, q, c.files, c.commits)
	if err != nil {
		return err
	}
	repo := q.Store.RepoPath(a)
	if err := q.Git.Repack(repo); err != nil {
		return err
	}
	// Draft 2 receives the commits the fetches bring over.
	if err := q.Call("POST", "/v1/skills/"+a.ID+"/versions", q.Admin, map[string]int{"from": 1}, nil); err != nil {
		return err
	}
	cgURL, stop, err := bench.Serve(&cgi.Handler{Path: gitPath, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(repo), "GIT_HTTP_EXPORT_ALL=1"}})
	if err != nil {
		return err
	}
	defer stop()
	qu, err := url.Parse(q.URL + "/git/bench/skills/big.git")
	if err != nil {
		return err
	}
	qu.User = url.UserPassword("git", q.Admin)
	servers := []struct{ name, url string }{{"cgit", cgURL + "/" + filepath.Base(repo)}, {"quire", qu.String()}}

	dir, err := os.MkdirTemp("", "quire-bench-git-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env := append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	git := func(args ...string) (time.Duration, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(string(out)))
		}
		return time.Since(start), nil
	}
	// One untimed clone each fills caches on both sides.
	for _, s := range servers {
		if _, err := git("clone", "-q", "--mirror", s.url, "warm-"+s.name); err != nil {
			return err
		}
	}
	clones := make([][]time.Duration, len(servers))
	fetches := make([][]time.Duration, len(servers))
	for i := range c.gitRounds {
		for k := range servers {
			s := servers[(i+k)%len(servers)]
			d, err := git("clone", "-q", "--mirror", s.url, fmt.Sprintf("%s-%d", s.name, i))
			if err != nil {
				return err
			}
			clones[(i+k)%len(servers)] = append(clones[(i+k)%len(servers)], d)
		}
		if _, err := q.Store.PutFiles(ctx, benchActor, a, 2, bench.Revision(c.files, c.commits+i), "", fmt.Sprintf("Fetch round %d", i)); err != nil {
			return err
		}
		for k := range servers {
			s := servers[(i+k)%len(servers)]
			d, err := git("-C", fmt.Sprintf("%s-%d", s.name, i), "fetch", "-q")
			if err != nil {
				return err
			}
			fetches[(i+k)%len(servers)] = append(fetches[(i+k)%len(servers)], d)
			os.RemoveAll(filepath.Join(dir, fmt.Sprintf("%s-%d", s.name, i)))
		}
	}
	r.section("git over smart HTTP", fmt.Sprintf(`
A mirror clone of a skill repository of %d small files written in %d
commits (packed, as the background repacker leaves it), and an
incremental fetch of one new 10-file commit on a draft, with the stock
git client from quire (/git/, admin session as the Basic password) and
from C git's http-backend (net/http/cgi, same bare repository, no
authentication). After one untimed clone each, %d rounds in alternating
order; medians. Goal: within 1.5x of http-backend.`, c.files, c.commits, c.gitRounds))
	cl, fe := [2]time.Duration{bench.MedianDuration(clones[0]), bench.MedianDuration(clones[1])}, [2]time.Duration{bench.MedianDuration(fetches[0]), bench.MedianDuration(fetches[1])}
	r.table("git http-backend", []row{
		{figure: "mirror clone", quire: ms(cl[1]), baseline: ms(cl[0]), ratio: float64(cl[1]) / float64(cl[0]), goal: "≤ 1.50x", pass: float64(cl[1]) <= 1.5*float64(cl[0])},
		{figure: "incremental fetch", quire: ms(fe[1]), baseline: ms(fe[0]), ratio: float64(fe[1]) / float64(fe[0]), goal: "≤ 1.50x", pass: float64(fe[1]) <= 1.5*float64(fe[0])},
	})
	return nil
}

// bigSkill writes a published skill of files files in commits commits.
func bigSkill(ctx context.Context, q *bench.Quire, files, commits int) (*quire.Asset, error) {
	var sk struct{ Skill struct{ ID string } }
	if err := q.Call("POST", "/v1/projects/"+q.ProjectID+"/skills", q.Admin, map[string]string{"name": "Big", "slug": "big", "description": "benchmark skill"}, &sk); err != nil {
		return nil, err
	}
	a, err := q.Store.Asset(ctx, quire.KindSkill, sk.Skill.ID)
	if err != nil {
		return nil, err
	}
	if _, err := q.Store.CreateVersion(ctx, benchActor, a, quire.Base{Empty: true}, bench.SkillFiles("big", files)); err != nil {
		return nil, err
	}
	for c := 1; c < commits; c++ {
		if _, err := q.Store.PutFiles(ctx, benchActor, a, 1, bench.Revision(files, c), "", fmt.Sprintf("Revision %d", c)); err != nil {
			return nil, err
		}
	}
	if err := q.Call("POST", "/v1/skills/"+a.ID+"/versions/1/publish", q.Admin, nil, nil); err != nil {
		return nil, err
	}
	return a, nil
}
