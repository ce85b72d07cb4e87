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

// projectJob is one queued change of a project's view: ch, or the
// whole view made from the live versions when full.
type projectJob struct {
	ctx     context.Context
	after   <-chan struct{} // applied once this is closed (see answered)
	by      quire.Actor
	project string
	ch      quire.ProjectChange
	full    bool
	msg     string
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
	a.enqueueProject(projectJob{
		ctx: context.WithoutCancel(ctx), after: answered(ctx), by: p.Actor(), project: as.ProjectID, msg: msg,
		ch: quire.ProjectChange{Skill: as, Slug: as.Slug, OldSlug: oldSlug, Commit: commit},
	})
}

// enqueueProject queues job, starting the worker if it is not running.
func (a *App) enqueueProject(job projectJob) {
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
		if job.after != nil {
			// The request that made the change answers first; jobs
			// stay in order, as the queue is applied one by one.
			t := time.NewTimer(maxAnswerWait)
			select {
			case <-job.after:
				time.Sleep(answerSettle)
			case <-t.C:
			}
			t.Stop()
		}
		if err := a.applyProjectJob(job); err != nil && a.ev.Logger != nil {
			a.ev.Logger.Error("project repository: a change was not applied; start-up brings the view in line",
				"project_id", job.project, "skill", job.ch.Slug, "error", err.Error())
		}
	}
}

func (a *App) applyProjectJob(job projectJob) error {
	ctx, cancel := context.WithTimeout(job.ctx, time.Minute)
	defer cancel()
	pr, err := a.meta.Project(ctx, job.project)
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
	if job.full {
		_, err = a.projectRepos.SyncProject(ctx, job.by, pr, skills, job.msg)
		return err
	}
	_, err = a.projectRepos.ApplyProjectChange(ctx, job.by, pr, skills, job.ch, job.msg)
	return err
}

// maxAnswerWait bounds how long background work waits for a request's
// answer: a request that streams, or a context that is not a request's
// by mistake, holds the project's view back no longer than this.
const maxAnswerWait = time.Second

// answerSettle is how long background work waits after its request's
// context ended: the answer's write to the connection takes far less.
const answerSettle = 2 * time.Millisecond

// answered is what background work started for ctx waits on: its end
// when it is a request's (quire.InRequest), nothing otherwise.
//
// A request's background work (a change of the project's repository),
// started by a use case for a context marked quire.InRequest, waits until
// that context ends, then answerSettle more, and at most maxAnswerWait.
// net/http ends a request's context when its handler returns, just
// before it writes the buffered answer to the connection; the settle
// leaves that write, and the client's read, the cores. Started at once,
// the work shared the CPU with the rest of the request and slowed its
// answer: on two cores a publish took 1.3-1.9x as long with the project
// repository as without it (issue 31); waiting for the context alone,
// 1.1-1.5x; with the settle, 0.9-1.1x.
func answered(ctx context.Context) <-chan struct{} {
	if !quire.IsInRequest(ctx) {
		return nil
	}
	return ctx.Done()
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
// versions of its skills: start-up runs it before the server answers, so
// that whatever a stop interrupted is mended. Where the repository
// exists that costs little (a ref and a commit read per skill: its
// objects are there). Making a missing one copies every live skill's
// objects: done now when the projects lacking one hold at most
// maxStartupBuild skills between them (a crash right after a project's
// first publishes), queued for the background otherwise (a data root from
// before project repositories), so a large upgrade does not hold the
// start. It returns how many repositories it changed now.
func (a *App) SyncProjects(ctx context.Context) (int, error) {
	if a.projectRepos == nil {
		return 0, nil
	}
	prs, err := a.meta.Projects(ctx)
	if err != nil {
		return 0, err
	}
	type todo struct {
		pr     *quire.Project
		skills []*quire.Asset
	}
	var now, missing []todo
	toBuild := 0
	for _, pr := range prs {
		skills, err := a.meta.Assets(ctx, quire.KindSkill, pr.ID)
		if err != nil {
			return 0, err
		}
		if a.projectRepos.HasProjectRepo(pr) {
			now = append(now, todo{pr, skills})
			continue
		}
		missing = append(missing, todo{pr, skills})
		toBuild += len(skills)
	}
	if toBuild <= maxStartupBuild {
		now, missing = append(now, missing...), nil
	}
	for _, t := range missing {
		a.enqueueProject(projectJob{ctx: context.WithoutCancel(ctx), by: systemActor, project: t.pr.ID, full: true, msg: "Make the project repository from the live versions"})
	}
	n := 0
	for _, t := range now {
		c, err := a.projectRepos.SyncProject(ctx, systemActor, t.pr, t.skills, "Bring the project repository in line with the live versions")
		if err != nil {
			return n, err
		}
		if c != "" {
			n++
		}
	}
	return n, nil
}

// maxStartupBuild is how many skills start-up copies into missing project
// repositories before it answers; more are made in the background.
const maxStartupBuild = 500

// systemActor authors what quire does of itself.
var systemActor = quire.Actor{Name: "quire", Email: "quire@localhost"}

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
