package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/valid"
	"golang.org/x/crypto/bcrypt"
)

// The account generate creates and measure logs in with.
const (
	adminEmail    = "scale@example.com"
	adminPassword = "scale-password"
)

// generator fills a data root. Assets are spread round-robin over the
// projects; each skill version writes every file in one commit (as the
// API's zip upload does) and changes a quarter of them from the version
// before, so versions share most blobs as they would in production.
type generator struct {
	data           string
	projects       int
	skills         int
	versions       int
	files          int
	prompts        int
	promptVersions int
	payloads       int
	workers        int
}

func (g *generator) parse(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("quire-scale generate", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&g.data, "data", "", "data root to fill (required; must be new or empty)")
	fs.IntVar(&g.projects, "projects", 100, "projects the assets are spread over")
	fs.IntVar(&g.skills, "skills", 10000, "skills")
	fs.IntVar(&g.versions, "versions", 5, "versions per skill")
	fs.IntVar(&g.files, "files", 20, "files per skill version")
	fs.IntVar(&g.prompts, "prompts", 2000, "prompts")
	fs.IntVar(&g.promptVersions, "prompt-versions", 10, "versions per prompt")
	fs.IntVar(&g.payloads, "payloads", 3, "payloads per prompt")
	fs.IntVar(&g.workers, "workers", 2*runtime.GOMAXPROCS(0), "assets written at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if g.data == "" {
		return fmt.Errorf("generate: -data is required")
	}
	if g.projects < 1 || g.versions < 1 || g.files < 1 || g.promptVersions < 1 || g.workers < 1 {
		return fmt.Errorf("generate: -projects, -versions, -files, -prompt-versions and -workers must be positive")
	}
	return nil
}

func (g *generator) run(ctx context.Context, out io.Writer) error {
	start := time.Now()
	store, err := gitstore.Open(gitstore.Options{Root: g.data})
	if err != nil {
		return err
	}
	defer store.Close()
	by := quire.Actor{Name: "quire-scale", Email: adminEmail}
	hash, err := bcrypt.GenerateFromPassword([]byte(adminPassword), bcrypt.MinCost)
	if err != nil {
		return err
	}
	if err := store.CreateUser(ctx, by, &quire.User{Email: adminEmail, Name: "Scale", Role: quire.RoleAdmin, PasswordHash: string(hash)}); err != nil {
		return fmt.Errorf("create admin: %w", err)
	}
	projects := make([]string, g.projects)
	for i := range projects {
		p := &quire.Project{Name: fmt.Sprintf("Project %d", i), Slug: fmt.Sprintf("project-%04d", i)}
		if err := store.CreateProject(ctx, by, p); err != nil {
			return fmt.Errorf("create project: %w", err)
		}
		projects[i] = p.ID
	}
	fmt.Fprintf(out, "generate: %d projects in %s\n", g.projects, time.Since(start).Round(time.Millisecond))

	total := g.skills + g.prompts
	var done atomic.Int64
	progress := func() {
		if n := done.Add(1); n%500 == 0 || int(n) == total {
			el := time.Since(start)
			fmt.Fprintf(out, "generate: %d/%d assets, %s, %.0f assets/s\n", n, total, el.Round(time.Second), float64(n)/el.Seconds())
		}
	}
	jobs := make(chan int)
	errc := make(chan error, g.workers)
	var wg sync.WaitGroup
	for range g.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				var err error
				if i < g.skills {
					err = g.skill(ctx, store, by, projects[i%len(projects)], i)
				} else {
					err = g.prompt(ctx, store, by, projects[i%len(projects)], i-g.skills)
				}
				if err != nil {
					errc <- err
					return
				}
				progress()
			}
		}()
	}
	var failed error
feed:
	for i := range total {
		select {
		case jobs <- i:
		case failed = <-errc:
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if failed == nil && len(errc) > 0 {
		failed = <-errc
	}
	if failed != nil {
		return failed
	}
	fmt.Fprintf(out, "generate: done: %d skills x %d versions x %d files, %d prompts x %d versions in %s\n",
		g.skills, g.versions, g.files, g.prompts, g.promptVersions, time.Since(start).Round(time.Second))
	return nil
}

// versionState is the state generate leaves version n (1-based) of
// count in: the last one a draft (when there are several), the one
// before it live, the first archived once another is live (when there
// are more than three), the rest published.
func versionState(n, count int) quire.VersionState {
	if count > 1 && n == count {
		return quire.StateDraft
	}
	return quire.StatePublished
}

// skill creates skill i with its versions.
func (g *generator) skill(ctx context.Context, store *gitstore.Store, by quire.Actor, projectID string, i int) error {
	slug := fmt.Sprintf("skill-%05d", i)
	a := &quire.Asset{ProjectID: projectID, Kind: quire.KindSkill, Name: fmt.Sprintf("Skill %d", i), Slug: slug, Description: "A generated skill.", CreatedBy: by.Email}
	if err := store.CreateAsset(ctx, by, a); err != nil {
		return fmt.Errorf("create %s: %w", slug, err)
	}
	files := make([]quire.FileContent, g.files)
	for n := 1; n <= g.versions; n++ {
		for f := range files {
			// Version 1 writes every file; later ones change a quarter.
			if n > 1 && f%4 != n%4 {
				continue
			}
			files[f] = skillFile(slug, f, n)
		}
		v, err := store.CreateVersion(ctx, by, a, quire.Base{Live: true}, files)
		if err != nil {
			return fmt.Errorf("%s: version %d: %w", slug, n, err)
		}
		if err := settle(ctx, store, by, a, v.Number, g.versions, func(read quire.ReadFunc) error {
			b, found, err := read("SKILL.md")
			if err != nil {
				return err
			}
			return valid.SkillManifest(b, found, slug)
		}); err != nil {
			return fmt.Errorf("%s: version %d: %w", slug, n, err)
		}
	}
	return nil
}

// settle publishes draft n unless it is to stay a draft, and archives
// version 1 once version 2 is live, when there are more than three.
func settle(ctx context.Context, store *gitstore.Store, by quire.Actor, a *quire.Asset, n, count int, check func(quire.ReadFunc) error) error {
	if versionState(n, count) == quire.StateDraft {
		return nil
	}
	if _, err := store.PublishVersion(ctx, by, a, n, check); err != nil {
		return err
	}
	if n == 2 && count > 3 {
		_, err := store.ArchiveVersion(ctx, by, a, 1)
		return err
	}
	return nil
}

// skillFile is file f of version n: SKILL.md first, then reference
// documents and scripts of a few kilobytes.
func skillFile(slug string, f, n int) quire.FileContent {
	if f == 0 {
		return quire.FileContent{Path: "SKILL.md", Content: fmt.Appendf(nil,
			"---\nname: %s\ndescription: Generated skill %s, revision %d.\n---\n# %s\n\nSee reference/ for details.\n", slug, slug, n, slug)}
	}
	path := fmt.Sprintf("reference/doc-%02d.md", f)
	if f%5 == 0 {
		path = fmt.Sprintf("scripts/tool-%02d.py", f)
	}
	b := fmt.Appendf(nil, "# %s %s (revision %d)\n\n", slug, path, n)
	for line := 0; len(b) < 1500+100*(f%10); line++ {
		b = fmt.Appendf(b, "Line %d of %s: steps, notes and examples for the agent to follow.\n", line, path)
	}
	return quire.FileContent{Path: path, Content: b}
}

// prompt creates prompt i with its versions and payloads.
func (g *generator) prompt(ctx context.Context, store *gitstore.Store, by quire.Actor, projectID string, i int) error {
	slug := fmt.Sprintf("prompt-%05d", i)
	a := &quire.Asset{ProjectID: projectID, Kind: quire.KindPrompt, Name: fmt.Sprintf("Prompt %d", i), Slug: slug, Description: "A generated prompt.", CreatedBy: by.Email}
	if err := store.CreateAsset(ctx, by, a); err != nil {
		return fmt.Errorf("create %s: %w", slug, err)
	}
	for n := 1; n <= g.promptVersions; n++ {
		v, err := store.CreateVersion(ctx, by, a, quire.Base{Live: true}, nil)
		if err != nil {
			return fmt.Errorf("%s: version %d: %w", slug, n, err)
		}
		tmpl := fmt.Sprintf("You are assistant %d (revision %d). Greet {{name}} and write a short note about {{topic}}.", i, n)
		c := &quire.PromptContent{Template: &tmpl, Model: "gpt-test", ModelParams: json.RawMessage(`{"temperature":0.2}`)}
		if _, err := store.WritePrompt(ctx, by, a, v.Number, c, v.Commit); err != nil {
			return fmt.Errorf("%s: version %d: %w", slug, n, err)
		}
		if err := settle(ctx, store, by, a, v.Number, g.promptVersions, nil); err != nil {
			return fmt.Errorf("%s: version %d: %w", slug, n, err)
		}
	}
	for p := range g.payloads {
		pl := &quire.Payload{Name: fmt.Sprintf("case %d", p), Variables: json.RawMessage(fmt.Sprintf(`{"name":"User %d","topic":"topic %d"}`, p, p)), CreatedBy: by.Email}
		if err := store.CreatePayload(ctx, by, a, pl); err != nil {
			return fmt.Errorf("%s: payload %d: %w", slug, p, err)
		}
	}
	return nil
}
