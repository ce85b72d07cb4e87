package app

import (
	"context"
	"sync"
	"time"

	"github.com/quire/quire"
)

// Each project has a read-only git repository holding the live version
// of every skill it has (gitstore/projectrepo.go), for installers that
// take a whole project from one URL. It is derived from the skills'
// repositories, and every use case that changes what is live -- a
// publish, a promote (rollback), a skill renamed or deleted -- queues
// its change right after its own write; a worker applies the queue in
// order, each change one commit by the same actor. So a publish does not
// wait on the view (it costs the publish nothing it waits for), and
// each change stays its own commit however quickly they come.
//
// The view is not the record: the skills' repositories are. A change
// queued but not applied when the process stops (a crash, a deploy), or
// one whose apply failed (it is logged), is mended by SyncProjects, which
// start-up runs before the server answers.

// projectJob is one queued change of a project's view.
type projectJob struct {
	ctx context.Context
	by  quire.Actor
	as  *quire.Asset
	ch  quire.ProjectChange
	msg string
}

// projectQueue is the queue of view changes and whether its worker runs.
type projectQueue struct {
	mu      sync.Mutex
	jobs    []projectJob
	running bool
	idle    chan struct{} // closed when the worker stops with nothing left
}

// projectChange queues the change of skill as to commit ("" when it is
// no longer live), with oldSlug its slug before a rename.
func (a *App) projectChange(ctx context.Context, p *quire.Principal, as *quire.Asset, commit, oldSlug, msg string) {
	if a.projectRepos == nil || as.Kind != quire.KindSkill {
		return
	}
	job := projectJob{
		ctx: context.WithoutCancel(ctx), by: p.Actor(), as: as, msg: msg,
		ch: quire.ProjectChange{Skill: as, Slug: as.Slug, OldSlug: oldSlug, Commit: commit},
	}
	q := &a.projectQ
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = append(q.jobs, job)
	if !q.running {
		q.running, q.idle = true, make(chan struct{})
		go a.runProjectJobs()
	}
}

// runProjectJobs applies the queued changes in order until none is left.
func (a *App) runProjectJobs() {
	q := &a.projectQ
	for {
		q.mu.Lock()
		if len(q.jobs) == 0 {
			q.running = false
			close(q.idle)
			q.mu.Unlock()
			return
		}
		job := q.jobs[0]
		q.jobs = q.jobs[1:]
		q.mu.Unlock()
		if err := a.applyProjectJob(job); err != nil && a.ev.Logger != nil {
			a.ev.Logger.Error("project repository: a change was not applied; start-up brings the view in line",
				"project_id", job.as.ProjectID, "skill", job.ch.Slug, "error", err.Error())
		}
	}
}

func (a *App) applyProjectJob(job projectJob) error {
	ctx, cancel := context.WithTimeout(job.ctx, time.Minute)
	defer cancel()
	pr, err := a.meta.Project(ctx, job.as.ProjectID)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil // the project is gone, its repository with it
	}
	if err != nil {
		return err
	}
	skills, err := a.meta.Assets(ctx, quire.KindSkill, pr.ID)
	if err != nil {
		return err
	}
	_, err = a.projectRepos.ApplyProjectChange(ctx, job.by, pr, skills, job.ch, job.msg)
	return err
}

// ProjectReposIdle waits until every queued change of the projects'
// repositories is applied, or ctx ends: for a shutdown that wants them
// written, and for tests.
func (a *App) ProjectReposIdle(ctx context.Context) error {
	q := &a.projectQ
	q.mu.Lock()
	idle, running := q.idle, q.running
	q.mu.Unlock()
	if !running {
		return nil
	}
	select {
	case <-idle:
		return a.ProjectReposIdle(ctx) // more may have come meanwhile
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SyncProjects brings every project's repository in line with the live
// versions of its skills: what a start-up runs, so that whatever a crash
// interrupted is mended before the server answers, and what makes a
// missing repository anew. It returns how many it changed.
func (a *App) SyncProjects(ctx context.Context) (int, error) {
	if a.projectRepos == nil {
		return 0, nil
	}
	prs, err := a.meta.Projects(ctx)
	if err != nil {
		return 0, err
	}
	by := quire.Actor{Name: "quire", Email: "quire@localhost"}
	n := 0
	for _, pr := range prs {
		skills, err := a.meta.Assets(ctx, quire.KindSkill, pr.ID)
		if err != nil {
			return n, err
		}
		c, err := a.projectRepos.SyncProject(ctx, by, pr, skills, "Bring the project repository in line with the live versions")
		if err != nil {
			return n, err
		}
		if c != "" {
			n++
		}
	}
	return n, nil
}

// ProjectRepo resolves project ref for p with access want and returns the
// pseudo-asset of its repository (quire.ProjectRepo), for the git doors.
func (a *App) ProjectRepo(ctx context.Context, p *quire.Principal, ref string, want quire.Access) (*quire.Asset, *quire.Project, error) {
	if a.projectRepos == nil {
		return nil, nil, quire.Errorf(quire.ENOTFOUND, "repository not found")
	}
	pr, err := a.Project(ctx, p, ref, want)
	if err != nil {
		return nil, nil, err
	}
	return quire.ProjectRepo(pr.ID), pr, nil
}
