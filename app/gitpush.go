package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/quire/quire"
)

// Push is the use case of a git push to the repository of as in project
// pr, which the door resolved for reading (ProjectAsset, ProjectRepo), as
// the hooks the git protocol (gitproto) calls: whether the caller may
// push at all, the draft rules of each ref update, the intents and
// events of the drafts it moves (PushEvents), and its review options
// (git push -o review). link is the door's URL of a review, for the
// lines git prints as "remote:".
func (a *App) Push(p *quire.Principal, as *quire.Asset, pr *quire.Project, link func(n int) string) quire.GitPush {
	h := &pushHooks{Handle: a.handle(p, as, pr), link: link}
	h.moving, h.moved = a.PushEvents(p, as)
	return quire.GitPush{Asset: as, By: p.Actor(), Hooks: h}
}

// pushHooks are quire.PushHooks for one push by h.P.
type pushHooks struct {
	*Handle
	link   func(n int) string
	moving func(context.Context, []quire.DraftMove) error
	moved  func(context.Context, []quire.DraftMove, error) error
}

func (h *pushHooks) Refused() error {
	switch {
	case h.Asset.Kind == quire.KindProject:
		return quire.Errorf(quire.EFORBIDDEN, "the repository of project %s is read-only: it holds the live version of each skill; push to a skill's own repository (/git/%s/skills/{skill}.git)", h.Project.Slug, h.Project.Slug)
	case h.need(quire.AccessWrite) != nil:
		return quire.Errorf(quire.EFORBIDDEN, "this credential may read but not push to project %s", h.Project.Slug)
	}
	return nil
}

func (h *pushHooks) Admit(refs quire.DraftRefs, m quire.DraftMove) error {
	return AdmitDraftMove(refs, m)
}

// AdmitDraftMove is the draft rule of a push: the version exists and is
// a draft, it is still at the commit the client saw (so a push never
// undoes a change it has not seen), and the push moves it forward.
func AdmitDraftMove(refs quire.DraftRefs, m quire.DraftMove) error {
	state, commit, err := refs.Draft(m.Version)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return quire.Errorf(quire.ENOTFOUND, "draft %d does not exist; create it through the API", m.Version)
	}
	if err != nil {
		return err
	}
	if state != quire.StateDraft {
		return quire.Errorf(quire.ECONFLICT, "version %d is %s; only a draft accepts pushes", m.Version, state)
	}
	if commit != m.Old {
		return quire.Errorf(quire.ECONFLICT, "draft %d is at %s, not %s: fetch and retry", m.Version, shortCommit(commit), shortCommit(m.Old))
	}
	ff, err := refs.IsAncestor(commit, m.New)
	if err != nil {
		return err
	}
	if !ff {
		return quire.Errorf(quire.ECONFLICT, "non-fast-forward: fetch, then merge or rebase before pushing")
	}
	return nil
}

func (h *pushHooks) Moving(ctx context.Context, moves []quire.DraftMove) error {
	return h.moving(ctx, moves)
}

func (h *pushHooks) Moved(ctx context.Context, moves []quire.DraftMove, failed error) error {
	return h.moved(ctx, moves, failed)
}

// Options applies git push -o review (and review.title=…) to the drafts
// the push moved, and says what it did.
func (h *pushHooks) Options(ctx context.Context, options []string, drafts []int) []string {
	var lines []string
	for _, r := range h.app.pushReview(ctx, h.P, h.Asset, h.Project, drafts, options) {
		if r.Err != nil {
			lines = append(lines, fmt.Sprintf("quire: no review of draft %d: %s", r.Version, quire.ErrorMessage(r.Err)))
			continue
		}
		verb := "updated"
		if r.Opened {
			verb = "opened"
		}
		lines = append(lines, fmt.Sprintf("quire: review %d of draft %d %s: %s", r.Review.Number, r.Version, verb, h.link(r.Review.Number)))
	}
	return lines
}

// shortCommit is a commit id as a push's report shows it; "nothing" for
// the zero id a ref that does not exist has.
func shortCommit(c string) string {
	if strings.Trim(c, "0") == "" {
		return "nothing"
	}
	return shortID(c)
}
