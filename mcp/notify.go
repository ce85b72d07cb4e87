package mcp

import (
	"context"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// Notifications: prompts/list_changed when what a listing shows changes
// (a prompt's live version, its name, whether it exists), and
// resources/updated for a subscribed skill file whose skill changed. Each
// goes only to the sessions whose credential can read the project the
// change is in (or was in, for a move or a delete): another project's
// publish tells a session nothing, not even that something happened.
//
// The SDK sends list_changed to every session, only when its own prompt
// list changes, debounced; so a change marks the sessions owed one and
// toggles a hidden prompt (quire.list-changed, which no list shows), and
// the sending middleware drops the notification on every session not
// owed it. resources/updated goes, by the SDK, to the URI's subscribers;
// the middleware drops it where the caller can no longer read the skill.

// listChangedPrompt is the prompt registered with the SDK only to have it
// announce prompts/list_changed. prompts/list and prompts/get never reach
// the SDK's list, so no one sees it.
const listChangedPrompt = "quire.list-changed"

const (
	notifyPromptsChanged = "notifications/prompts/list_changed"
	notifyResource       = "notifications/resources/updated"
	methodListen         = "subscriptions/listen"
)

// noteCaller keeps the credential of a session notifications can reach:
// one with an id (a 2025-11-25 or older session, its event stream) or a
// subscriptions/listen stream (2026-07-28). The ephemeral session of any
// other sessionless request is not kept: nothing is ever sent to it.
func (s *Server) noteCaller(req sdk.Request, method string, p *quire.Principal) {
	ss, ok := req.GetSession().(*sdk.ServerSession)
	if !ok || (ss.ID() == "" && method != methodListen) {
		return
	}
	if ex := req.GetExtra(); ex != nil {
		s.noteSession(ss, p, ex.Header)
	}
	s.mu.Lock()
	_, known := s.callers[ss]
	s.callers[ss] = p
	s.mu.Unlock()
	if !known {
		// Forget the session when it ends, so an ended one is neither
		// kept, told anything, nor answered on.
		go func() {
			ss.Wait()
			s.mu.Lock()
			delete(s.callers, ss)
			delete(s.owed, ss)
			if fs := s.sessions[ss.ID()]; fs != nil && fs.ss == ss {
				delete(s.sessions, ss.ID())
			}
			s.mu.Unlock()
		}()
	}
}

// noteListed records the state of prompts a listing showed, so the first
// change this process hears of one compares against what was listed.
func (s *Server) noteListed(page []app.AgentPrompt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ap := range page {
		if _, ok := s.live[ap.Asset.ID]; !ok {
			s.live[ap.Asset.ID] = app.PromptState{Name: ap.Name, ProjectID: ap.Project.ID, Commit: ap.Version.Commit}
		}
	}
}

// Changed hears of a change to asset id of kind, from any process (the
// change feed), and tells the open sessions that can see it.
func (s *Server) Changed(kind quire.Kind, id string) {
	switch kind {
	case quire.KindPrompt:
		s.promptChanged(id)
	case quire.KindSkill:
		s.skillChanged(id)
	}
}

// promptChanged sends prompts/list_changed to the sessions that can read
// the project prompt id is in, or was in, when what a listing shows of it
// changed. A draft edit changes nothing listed and sends nothing.
func (s *Server) promptChanged(id string) {
	ctx := context.Background()
	now, err := s.app.LiveState(ctx, id)
	gone := quire.ErrorCode(err) == quire.ENOTFOUND
	if err != nil && !gone {
		s.log.Warn("mcp: a prompt's change is not announced", "prompt", id, "error", err.Error())
		return
	}
	s.mu.Lock()
	was, seen := s.live[id]
	if gone {
		delete(s.live, id)
	} else {
		s.live[id] = now
	}
	s.mu.Unlock()
	var projects []string
	switch {
	case gone && !seen, !gone && !seen && now.Commit == "":
		return // never listed here, and not listed now
	case !seen:
		projects = []string{now.ProjectID} // new here: it may be new to a listing
	case gone:
		projects = []string{was.ProjectID}
	case was == now:
		return // a draft edit: nothing listed changed
	default:
		projects = []string{was.ProjectID, now.ProjectID}
	}
	if !s.owe(ctx, projects) {
		return
	}
	s.notify.Lock()
	s.sdk.AddPrompt(&sdk.Prompt{Name: listChangedPrompt}, nil)
	s.sdk.RemovePrompts(listChangedPrompt)
	s.notify.Unlock()
}

// owe marks list_changed owed to every open session whose credential can
// read one of projects (ids), as each project is now, and reports
// whether any is.
func (s *Server) owe(ctx context.Context, projects []string) bool {
	var prs []*quire.Project
	for _, id := range projects {
		if pr, err := s.app.SystemProject(ctx, id); err == nil {
			prs = append(prs, pr)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	some := false
	for ss, p := range s.callers {
		for _, pr := range prs {
			if p.CheckProject(pr, quire.AccessRead) == nil {
				s.owed[ss] = true
				some = true
				break
			}
		}
	}
	return some
}

// filterNotifications drops a notification on a session not meant to see
// it: list_changed where none is owed, resources/updated where the
// caller cannot read the skill.
func (s *Server) filterNotifications(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != notifyPromptsChanged && method != notifyResource {
			return next(ctx, method, req)
		}
		ss, ok := req.GetSession().(*sdk.ServerSession)
		if !ok {
			return next(ctx, method, req)
		}
		s.mu.Lock()
		p := s.callers[ss]
		owed := s.owed[ss]
		if method == notifyPromptsChanged {
			delete(s.owed, ss)
		}
		s.mu.Unlock()
		switch method {
		case notifyPromptsChanged:
			if !owed {
				return nil, nil
			}
		case notifyResource:
			uri := ""
			if rp, ok := req.GetParams().(*sdk.ResourceUpdatedNotificationParams); ok {
				uri = rp.URI
			}
			project, slug, _, err := parseSkillURI(uri)
			if p == nil || err != nil {
				return nil, nil
			}
			if _, err := s.app.AgentSkill(ctx, p, project, slug); err != nil {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// skillChanged sends resources/updated for every subscribed resource of
// skill id (the middleware keeps it from callers who cannot read it).
func (s *Server) skillChanged(id string) {
	ctx := context.Background()
	as, pr, err := s.app.SystemAsset(ctx, quire.KindSkill, id)
	if err != nil {
		return // deleted: its subscribers will find it gone
	}
	prefix := skillRoot(pr.Slug, as.Slug)
	s.mu.Lock()
	var uris []string
	for uri := range s.subs {
		if uri == prefix || strings.HasPrefix(uri, prefix+"/") {
			uris = append(uris, uri)
		}
	}
	s.mu.Unlock()
	for _, uri := range uris {
		if err := s.sdk.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			s.log.Warn("mcp: resources/updated not sent", "uri", uri, "error", err.Error())
		}
	}
}

// subscribe checks the caller may read the resource, a file or a
// directory of a live skill, before the SDK records the subscription.
func (s *Server) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	project, slug, fp, err := parseSkillURI(req.Params.URI)
	if err != nil {
		return rpcError(err)
	}
	sk, err := s.app.AgentSkill(ctx, p, project, slug)
	if err != nil {
		return s.fail(err)
	}
	if fp != "" && !hasFile(sk, fp) {
		if _, err := directoryChildren(sk, fp); err != nil {
			return rpcError(quire.Errorf(quire.ENOTFOUND, "resource %q not found in the skill's live version", req.Params.URI))
		}
	}
	s.mu.Lock()
	s.subs[req.Params.URI]++
	s.mu.Unlock()
	return nil
}

func hasFile(sk *app.AgentSkill, fp string) bool {
	for _, f := range sk.Files {
		if f.Path == fp {
			return true
		}
	}
	return false
}

func (s *Server) unsubscribe(ctx context.Context, req *sdk.UnsubscribeRequest) error {
	s.mu.Lock()
	if s.subs[req.Params.URI]--; s.subs[req.Params.URI] <= 0 {
		delete(s.subs, req.Params.URI)
	}
	s.mu.Unlock()
	return nil
}
