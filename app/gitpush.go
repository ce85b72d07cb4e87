package app

import (
	"context"
	"fmt"

	"github.com/quire/quire"
)

// Push is the use case of a git push to the repository of as in project
// pr, which the door resolved for reading (ProjectAsset, ProjectRepo):
// whether the caller may push at all, the intents and events of the
// drafts it moves (PushEvents), and its review options (git push -o
// review). The git protocol (gitproto) applies the push's ref rules and
// calls back into what this returns; link is the door's URL of a review,
// for the lines git prints as "remote:".
func (a *App) Push(p *quire.Principal, as *quire.Asset, pr *quire.Project, link func(n int) string) quire.GitPush {
	push := quire.GitPush{Asset: as, By: p.Actor()}
	push.Moving, push.Moved = a.PushEvents(p, as)
	push.Options = func(ctx context.Context, options []string, drafts []int) []string {
		var lines []string
		for _, r := range a.pushReview(ctx, p, as, pr, drafts, options) {
			if r.Err != nil {
				lines = append(lines, fmt.Sprintf("quire: no review of draft %d: %s", r.Version, quire.ErrorMessage(r.Err)))
				continue
			}
			verb := "updated"
			if r.Opened {
				verb = "opened"
			}
			lines = append(lines, fmt.Sprintf("quire: review %d of draft %d %s: %s", r.Review.Number, r.Version, verb, link(r.Review.Number)))
		}
		return lines
	}
	switch {
	case as.Kind == quire.KindProject:
		push.Refused = quire.Errorf(quire.EFORBIDDEN, "the repository of project %s is read-only: it holds the live version of each skill; push to a skill's own repository (/git/%s/skills/{skill}.git)", pr.Slug, pr.Slug)
	case p.CheckProject(pr, quire.AccessWrite) != nil:
		push.Refused = quire.Errorf(quire.EFORBIDDEN, "this credential may read but not push to project %s", pr.Slug)
	}
	return push
}
