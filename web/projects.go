package web

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// Projects: the project page (one app.ProjectOverview call), creating
// projects, skills and prompts, and a project's settings for its owners
// (members, review policy, webhooks).

func (u *UI) projectRoutes() {
	m := u.mux
	m.HandleFunc("GET "+Prefix+"{$}", u.authed(u.projectsPage))
	m.HandleFunc("POST "+Prefix+"projects", u.authed(u.createProject))
	m.HandleFunc("GET "+Prefix+"p/{project}", u.authed(u.projectPage))
	m.HandleFunc("POST "+Prefix+"p/{project}/{kind}", u.authed(u.createAsset))
	m.HandleFunc("GET "+Prefix+"p/{project}/settings", u.authed(u.settingsPage))
	m.HandleFunc("POST "+Prefix+"p/{project}/settings", u.authed(u.saveSettings))
	m.HandleFunc("POST "+Prefix+"p/{project}/members", u.authed(u.putMember))
	m.HandleFunc("POST "+Prefix+"p/{project}/members/{id}/delete", u.authed(u.deleteMember))
	m.HandleFunc("POST "+Prefix+"p/{project}/webhooks", u.authed(u.createWebhook))
	m.HandleFunc("POST "+Prefix+"p/{project}/webhooks/{id}/delete", u.authed(u.deleteWebhook))
}

type projectsView struct {
	Projects []*quire.Project
	Page     pager
	CSRF     string
}

// pager is the "Previous"/"Next" links of a list read in pages.
type pager struct {
	Prev, Next string // URLs; "" when there is none
}

func (u *UI) projectsPage(w http.ResponseWriter, r *http.Request, s *session) {
	ps, err := u.app.Projects(r.Context(), s.p)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Slug < ps[j].Slug })
	// app.Projects answers the whole (short) list; the page shows
	// listLimit at a time.
	v := projectsView{CSRF: s.csrf}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	from := min((page-1)*listLimit, len(ps))
	v.Projects = ps[from:min(from+listLimit, len(ps))]
	if page > 1 {
		v.Page.Prev = Prefix + "?page=" + strconv.Itoa(page-1)
	}
	if from+listLimit < len(ps) {
		v.Page.Next = Prefix + "?page=" + strconv.Itoa(page+1)
	}
	u.render(w, r, s, http.StatusOK, "projects", "Projects", v)
}

func (u *UI) createProject(w http.ResponseWriter, r *http.Request, s *session) {
	pr, err := u.app.CreateProject(r.Context(), s.p, metaForm(r))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"p/"+pr.Slug, http.StatusSeeOther)
}

// metaForm reads a name, an optional slug and a description.
func metaForm(r *http.Request) app.MetaEdit {
	name, desc := strings.TrimSpace(r.PostFormValue("name")), strings.TrimSpace(r.PostFormValue("description"))
	e := app.MetaEdit{Name: &name, Description: &desc}
	if slug := strings.TrimSpace(r.PostFormValue("slug")); slug != "" {
		e.Slug = &slug
	}
	return e
}

// projectPageSize is how many skills and prompts the project page shows
// at once (each row reads its repository for the live version and labels).
const projectPageSize = 25

type projectView struct {
	*app.ProjectOverview
	Owner, Writer bool
	Lists         []assetList
	CSRF          string
}

// assetList is one of the project page's lists, its skills or its
// prompts, drawn by the template "assets".
type assetList struct {
	Noun, Purpose string // "skill", "What it does"
	Project       string
	Writer        bool
	CSRF          string
	Assets        []app.AssetSummary
	Page          pager
}

func (l assetList) Plural() string { return l.Noun + "s" }
func (l assetList) Title() string  { return strings.ToUpper(l.Noun[:1]) + l.Noun[1:] }

func (u *UI) projectPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	ov, err := u.app.ProjectOverview(r.Context(), s.p, r.PathValue("project"), app.OverviewOptions{
		Skills:   quire.ListOptions{Limit: projectPageSize, Cursor: q.Get("skills")},
		Prompts:  quire.ListOptions{Limit: projectPageSize, Cursor: q.Get("prompts")},
		Activity: 20,
	})
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	access := s.p.ProjectAccess(ov.Project)
	v := projectView{ProjectOverview: ov, Owner: access >= quire.AccessAdmin, Writer: access >= quire.AccessWrite, CSRF: s.csrf}
	base := Prefix + "p/" + ov.Project.Slug
	link := func(key, cursor string) string {
		qq := url.Values{}
		for k, vs := range q {
			qq[k] = vs
		}
		qq.Set(key, cursor)
		return base + "?" + qq.Encode()
	}
	list := func(noun, purpose string, assets []app.AssetSummary, next string) assetList {
		l := assetList{Noun: noun, Purpose: purpose, Project: ov.Project.Slug, Writer: v.Writer, CSRF: s.csrf, Assets: assets}
		key := l.Plural()
		if next != "" {
			l.Page.Next = link(key, next) + "#" + key + "-h"
		}
		if q.Get(key) != "" {
			l.Page.Prev = base + "#" + key + "-h"
		}
		return l
	}
	v.Lists = []assetList{list("skill", "What it does", ov.Skills, ov.NextSkills), list("prompt", "What it is for", ov.Prompts, ov.NextPrompts)}
	u.render(w, r, s, http.StatusOK, "project", ov.Project.Name, v)
}

// createAsset makes a skill or a prompt in the project, and opens its
// first draft so there is something to edit straight away.
func (u *UI) createAsset(w http.ResponseWriter, r *http.Request, s *session) {
	plural := r.PathValue("kind")
	kind, ok := kindOf(plural)
	if !ok {
		u.renderError(w, r, s, http.StatusNotFound, "There is no page here.")
		return
	}
	ctx := r.Context()
	ph, err := u.app.OpenProject(ctx, s.p, r.PathValue("project"), quire.AccessRead)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	pr := ph.Project
	as, err := ph.CreateAsset(ctx, kind, metaForm(r))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	base := Prefix + "p/" + pr.Slug + "/" + plural + "/" + as.Slug
	h, err := u.app.OpenIn(ctx, s.p, pr.ID, kind, as.ID, quire.AccessWrite)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	if kind == quire.KindPrompt {
		t := "Hello {{name}}!"
		v, err := h.CreatePromptVersion(ctx, app.NewPromptVersion{Base: quire.Base{Empty: true}, Edit: app.PromptEdit{Template: &t}})
		if err != nil {
			u.fail(w, r, s, err)
			return
		}
		http.Redirect(w, r, base+"/v/"+strconv.Itoa(v.Number)+"/edit", http.StatusSeeOther)
		return
	}
	v, err := h.CreateVersion(ctx, quire.Base{Empty: true})
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	// A skill is published with its SKILL.md: the draft starts with one
	// to fill in.
	desc := as.Description
	if desc == "" {
		desc = "What this skill does and when to use it."
	}
	if strings.ContainsAny(desc, ":#\"'{}[]&*!|>%@`,\\") || strings.TrimSpace(desc) != desc {
		desc = strconv.Quote(desc) // a YAML double-quoted string
	}
	manifest := "---\nname: " + as.Slug + "\ndescription: " + desc + "\n---\n\n# " + as.Name + "\n\nInstructions for the agent.\n"
	if _, _, err := h.UpsertFile(ctx, v.Number, app.FileWrite{Path: "SKILL.md", Content: []byte(manifest), Message: "Start SKILL.md"}); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, base+"/v/"+strconv.Itoa(v.Number), http.StatusSeeOther)
}

type settingsView struct {
	Project  *quire.Project
	Policy   quire.ReviewPolicy
	Members  []app.MemberSummary
	Webhooks []*quire.Webhook
	// WebhooksOff says why webhooks cannot be listed ("": they can).
	WebhooksOff string
	// NewSecret is a new webhook's signing secret, shown once.
	NewSecret string
	Events    []quire.EventType
	CSRF      string
}

func (u *UI) settingsPage(w http.ResponseWriter, r *http.Request, s *session) {
	u.showSettings(w, r, s, "")
}

// showSettings draws a project's settings for its owners; anyone else
// gets the error app gives them (403 for a member, 404 for a stranger).
func (u *UI) showSettings(w http.ResponseWriter, r *http.Request, s *session, secret string) {
	ctx := r.Context()
	ph, err := u.app.OpenProject(ctx, s.p, r.PathValue("project"), quire.AccessAdmin)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	pr := ph.Project
	ov, err := u.app.ProjectOverview(ctx, s.p, pr.ID, app.OverviewOptions{Skills: quire.ListOptions{Limit: 1}, Prompts: quire.ListOptions{Limit: 1}})
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	v := settingsView{Project: pr, Policy: pr.Policy(), Members: ov.Members, NewSecret: secret, CSRF: s.csrf, Events: webhookEvents}
	if v.Webhooks, err = ph.Webhooks(ctx); err != nil {
		if quire.ErrorCode(err) != quire.EUNAVAILABLE {
			u.fail(w, r, s, err)
			return
		}
		v.WebhooksOff = quire.ErrorMessage(err)
	}
	u.render(w, r, s, http.StatusOK, "settings", pr.Name+" settings", v)
}

// webhookEvents are the event types a webhook form offers.
var webhookEvents = []quire.EventType{
	quire.EventAll, quire.EventVersionPublished, quire.EventVersionPromoted, quire.EventVersionCreated, quire.EventVersionUpdated,
	quire.EventLabelMoved, quire.EventReviewOpened, quire.EventReviewApproved, quire.EventReviewMerged, quire.EventAssetCreated,
}

// saveSettings sets the project's name, description, visibility and
// review policy.
func (u *UI) saveSettings(w http.ResponseWriter, r *http.Request, s *session) {
	ph, err := u.app.OpenProject(r.Context(), s.p, r.PathValue("project"), quire.AccessAdmin)
	if err != nil {
		u.fail(w, r, s, err) // before the form is read
		return
	}
	e, err := settingsForm(r)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	pr, err := ph.Update(r.Context(), e)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"p/"+pr.Slug+"/settings", http.StatusSeeOther)
}

// settingsForm reads the settings form.
func settingsForm(r *http.Request) (app.ProjectEdit, error) {
	e := app.ProjectEdit{MetaEdit: metaForm(r)}
	e.Slug = nil
	if vis := r.PostFormValue("visibility"); vis != "" {
		e.Visibility = &vis
	}
	n, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("required_approvals")))
	if err != nil {
		return e, quire.Errorf(quire.EINVALID, "required approvals must be a number from 0 to 10")
	}
	dismiss := r.PostFormValue("dismiss_stale") == "on"
	pol := quire.ReviewPolicy{
		RequiredApprovals: n, AllowSelfApproval: r.PostFormValue("allow_self_approval") == "on",
		DismissStale:    &dismiss,
		ProtectedLabels: append([]string{}, strings.FieldsFunc(r.PostFormValue("protected_labels"), func(c rune) bool { return c == ',' || c == ' ' })...),
	}
	e.ReviewPolicy = &pol
	return e, nil
}

func (u *UI) putMember(w http.ResponseWriter, r *http.Request, s *session) {
	ph, err := u.app.OpenProject(r.Context(), s.p, r.PathValue("project"), quire.AccessAdmin)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	_, pr, err := ph.PutMember(r.Context(), app.MemberEdit{Email: strings.TrimSpace(r.PostFormValue("email")), UserID: r.PostFormValue("user_id"), Role: quire.ProjectRole(r.PostFormValue("role"))})
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"p/"+pr.Slug+"/settings", http.StatusSeeOther)
}

func (u *UI) deleteMember(w http.ResponseWriter, r *http.Request, s *session) {
	if err := u.app.DeleteMember(r.Context(), s.p, r.PathValue("project"), r.PathValue("id")); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"p/"+url.PathEscape(r.PathValue("project"))+"/settings", http.StatusSeeOther)
}

// createWebhook adds a webhook and shows the settings with its signing
// secret, once (the page is no-store and the secret in no URL).
func (u *UI) createWebhook(w http.ResponseWriter, r *http.Request, s *session) {
	ph, err := u.app.OpenProject(r.Context(), s.p, r.PathValue("project"), quire.AccessAdmin)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	url, desc := strings.TrimSpace(r.PostFormValue("url")), strings.TrimSpace(r.PostFormValue("description"))
	evs := []quire.EventType{}
	for _, e := range r.PostForm["events"] {
		evs = append(evs, quire.EventType(e))
	}
	_, secret, err := ph.CreateWebhook(r.Context(), app.WebhookInput{URL: &url, Description: &desc, Events: &evs})
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	u.showSettings(w, r, s, secret)
}

func (u *UI) deleteWebhook(w http.ResponseWriter, r *http.Request, s *session) {
	ph, err := u.app.OpenProject(r.Context(), s.p, r.PathValue("project"), quire.AccessAdmin)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	if err := ph.DeleteWebhook(r.Context(), r.PathValue("id")); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"p/"+url.PathEscape(r.PathValue("project"))+"/settings", http.StatusSeeOther)
}
