package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// listLimit bounds every list a page shows; the rest is a "Next page"
// link away (the list's cursor in the query).
const listLimit = 100

func kindOf(seg string) (quire.Kind, bool) {
	switch seg {
	case "skills":
		return quire.KindSkill, true
	case "prompts":
		return quire.KindPrompt, true
	}
	return "", false
}

// assetRef is the part of a URL naming an asset, resolved.
type assetRef struct {
	Project *quire.Project
	Asset   *quire.Asset
	Kind    quire.Kind
	Plural  string // the URL segment: skills, prompts
	// h is the request's hold on the asset: the page's use cases.
	h *app.Handle
}

// Base is the asset's UI path.
func (a assetRef) Base() string {
	return Prefix + "p/" + a.Project.Slug + "/" + a.Plural + "/" + a.Asset.Slug
}

// CloneURL is the path of the asset's git repository (the page prefixes
// the origin the browser used).
func (a assetRef) ClonePath() string {
	return "/git/" + a.Project.Slug + "/" + a.Plural + "/" + a.Asset.Slug + ".git"
}

// resolve opens {project}/{kind}/{asset} of the path (app.OpenIn), once
// per request: an asset the caller may not read is ENOTFOUND, as in the
// API.
func (u *UI) resolve(r *http.Request, s *session, plural string) (assetRef, error) {
	kind, ok := kindOf(plural)
	if !ok {
		return assetRef{}, quire.Errorf(quire.ENOTFOUND, "no such page")
	}
	h, err := u.app.OpenIn(r.Context(), s.p, r.PathValue("project"), kind, r.PathValue("asset"), quire.AccessRead)
	if err != nil {
		return assetRef{}, err
	}
	return assetRef{Project: h.Project, Asset: h.Asset, Kind: kind, Plural: plural, h: h}, nil
}

type labelRow struct {
	quire.Label
	History   []quire.LabelMove
	Protected bool // by the project's review policy
}

type assetView struct {
	assetRef
	Versions []*quire.Version
	Page     pager
	Writer   bool
	Owner    bool
	Live     int
	Labels   []labelRow
	Reviews  []*quire.Review
	CSRF     string
}

func (u *UI) assetPage(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	ref, err := u.resolve(r, s, r.PathValue("kind"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	access := s.p.ProjectAccess(ref.Project)
	v := assetView{assetRef: ref, CSRF: s.csrf, Writer: access >= quire.AccessWrite, Owner: access >= quire.AccessAdmin}
	cursor := r.URL.Query().Get("cursor")
	var next string
	v.Versions, next, err = ref.h.Versions(ctx, "", quire.ListOptions{Limit: listLimit, Cursor: cursor})
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	if next != "" {
		v.Page.Next = ref.Base() + "?cursor=" + url.QueryEscape(next) + "#versions-h"
	}
	if cursor != "" {
		v.Page.Prev = ref.Base() + "#versions-h"
	}
	if lv, err := ref.h.LiveVersion(ctx); err == nil {
		v.Live = lv.Number
	}
	labels, err := ref.h.Labels(ctx)
	if err != nil && quire.ErrorCode(err) != quire.EUNAVAILABLE {
		u.fail(w, r, s, err)
		return
	}
	for _, l := range labels {
		h, _ := ref.h.LabelHistory(ctx, l.Name)
		v.Labels = append(v.Labels, labelRow{Label: l, History: h, Protected: slices.Contains(ref.Project.Policy().ProtectedLabels, l.Name)})
	}
	v.Reviews, err = ref.h.Reviews(ctx, quire.ReviewOpen)
	if err != nil && quire.ErrorCode(err) != quire.EUNAVAILABLE {
		u.fail(w, r, s, err)
		return
	}
	u.render(w, r, s, http.StatusOK, "asset", ref.Asset.Name, v)
}

// resolveVersion is resolve for a page of one version: the asset and
// the version number {n} of the path.
func (u *UI) resolveVersion(r *http.Request, s *session, plural string) (assetRef, int, error) {
	ref, err := u.resolve(r, s, plural)
	if err != nil {
		return assetRef{}, 0, err
	}
	n, err := versionNumber(r)
	return ref, n, err
}

// version reads the version a page of one version shows.
func (u *UI) version(r *http.Request, s *session, plural string) (assetRef, *quire.Version, error) {
	ref, n, err := u.resolveVersion(r, s, plural)
	if err != nil {
		return assetRef{}, nil, err
	}
	ver, err := ref.h.Version(r.Context(), n)
	return ref, ver, err
}

// versionNumber reads {n}; anything but a positive number is no page.
func versionNumber(r *http.Request) (int, error) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		return 0, quire.Errorf(quire.ENOTFOUND, "no such version")
	}
	return n, nil
}

type versionView struct {
	assetRef
	Version *quire.Version
	// Publish says whether the draft may be published now and why not
	// (app.Publishable); Review is its open review, if any.
	Publish  app.Mergeable
	Review   *quire.Review
	Writer   bool
	Owner    bool // may publish past the review policy
	Origin   string
	Files    []quire.File
	Open     *fileView // the file shown: SKILL.md by default
	Prompt   *quire.PromptContent
	Params   string
	Schema   string
	Versions []*quire.Version // for the diff form
	CSRF     string
}

func (u *UI) versionPage(w http.ResponseWriter, r *http.Request, s *session) {
	u.showVersion(w, r, s, r.PathValue("kind"), "")
}

func (u *UI) filePage(w http.ResponseWriter, r *http.Request, s *session) {
	u.showVersion(w, r, s, "skills", r.PathValue("path"))
}

// showVersion draws a version: a skill's file tree with one file open
// (SKILL.md unless path names another), or a prompt's content.
func (u *UI) showVersion(w http.ResponseWriter, r *http.Request, s *session, plural, path string) {
	ctx := r.Context()
	ref, ver, err := u.version(r, s, plural)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	n := ver.Number
	access := s.p.ProjectAccess(ref.Project)
	v := versionView{assetRef: ref, Version: ver, Origin: origin(r, u.secure(r)), CSRF: s.csrf, Writer: access >= quire.AccessWrite, Owner: access >= quire.AccessAdmin}
	if ver.State == quire.StateDraft {
		if v.Publish, v.Review, err = ref.h.Publishable(ctx, n); err != nil {
			u.fail(w, r, s, err)
			return
		}
	}
	if v.Versions, _, err = ref.h.Versions(ctx, "", quire.ListOptions{Limit: listLimit}); err != nil {
		u.fail(w, r, s, err)
		return
	}
	if ref.Kind == quire.KindPrompt {
		if path != "" {
			u.fail(w, r, s, quire.Errorf(quire.ENOTFOUND, "prompts have no files to open"))
			return
		}
		if v.Prompt, err = u.app.PromptContent(ctx, ref.Asset, ver.Commit); err != nil {
			u.fail(w, r, s, err)
			return
		}
		v.Params, v.Schema = indentJSON(v.Prompt.ModelParams), indentJSON(v.Prompt.VariablesSchema)
		u.render(w, r, s, http.StatusOK, "version", ref.Asset.Name+" v"+strconv.Itoa(n), v)
		return
	}
	if v.Files, err = ref.h.Files(ctx, n); err != nil {
		u.fail(w, r, s, err)
		return
	}
	open := path
	if open == "" {
		for _, f := range v.Files {
			if f.Path == "SKILL.md" {
				open = f.Path
			}
		}
	}
	if open != "" {
		content, f, err := ref.h.ReadFile(ctx, n, open)
		if err != nil {
			u.fail(w, r, s, err)
			return
		}
		v.Open = showFile(f, content)
	}
	u.render(w, r, s, http.StatusOK, "version", ref.Asset.Name+" v"+strconv.Itoa(n), v)
}

// rawFile serves one file's bytes as an inert download: never as HTML
// from the UI's origin (text/plain or octet-stream, nosniff, a sandboxing
// CSP), so a file cannot run script here whatever it holds.
func (u *UI) rawFile(w http.ResponseWriter, r *http.Request, s *session) {
	ref, n, err := u.resolveVersion(r, s, "skills")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	content, f, err := ref.h.ReadFile(r.Context(), n, r.PathValue("path"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	if isText(content) {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", attachment(baseName(f.Path)))
	}
	h.Set("ETag", `"`+f.SHA+`"`)
	w.Write(content)
}

func (u *UI) zipDownload(w http.ResponseWriter, r *http.Request, s *session) {
	ref, n, err := u.resolveVersion(r, s, "skills")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	zip, err := ref.h.DownloadVersion(r.Context(), n)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", attachment(ref.Asset.Slug+"-v"+strconv.Itoa(n)+".zip"))
	w.Write(zip)
}

type diffView struct {
	assetRef
	From, To int
	Split    bool
	Versions []*quire.Version
	Files    []fileDiff
}

// diffPage compares two versions (?from=&to=; from defaults to to's base
// or the version before), unified or side by side (?view=split).
func (u *UI) diffPage(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	ref, err := u.resolve(r, s, r.PathValue("kind"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	v := diffView{assetRef: ref, Split: r.URL.Query().Get("view") == "split"}
	if v.Versions, _, err = ref.h.Versions(ctx, "", quire.ListOptions{Limit: listLimit}); err != nil {
		u.fail(w, r, s, err)
		return
	}
	q := r.URL.Query()
	v.From, _ = strconv.Atoi(q.Get("from"))
	v.To, _ = strconv.Atoi(q.Get("to"))
	if v.To == 0 && len(v.Versions) > 0 {
		v.To = v.Versions[0].Number
		for _, ver := range v.Versions {
			v.To = max(v.To, ver.Number)
		}
	}
	if v.From == 0 {
		v.From = v.To - 1
		for _, ver := range v.Versions {
			if ver.Number == v.To && ver.Base > 0 {
				v.From = ver.Base
			}
		}
	}
	if v.From < 1 || v.To < 1 {
		u.render(w, r, s, http.StatusOK, "diff", ref.Asset.Name+" diff", v)
		return
	}
	diffs, err := ref.h.Diff(ctx, v.From, v.To)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	for _, d := range diffs {
		v.Files = append(v.Files, parseDiff(d))
	}
	u.render(w, r, s, http.StatusOK, "diff", ref.Asset.Name+" diff", v)
}
