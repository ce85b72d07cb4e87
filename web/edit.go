package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// The editing pages: open a draft, write and delete a skill draft's
// files, publish. Each POST carries the session's form token (authed
// checks it) and redirects to the page showing the result (POST, then a
// 303 to a GET), so a reload never repeats a write.

func (u *UI) editRoutes() {
	m := u.mux
	m.HandleFunc("POST "+Prefix+"p/{project}/{kind}/{asset}/drafts", u.authed(u.newDraft))
	m.HandleFunc("POST "+Prefix+"p/{project}/{kind}/{asset}/v/{n}/publish", u.authed(u.publish))
	m.HandleFunc("GET "+Prefix+"p/{project}/skills/{asset}/v/{n}/edit/{path...}", u.authed(u.editPage))
	m.HandleFunc("GET "+Prefix+"p/{project}/skills/{asset}/v/{n}/new", u.authed(u.editPage))
	m.HandleFunc("POST "+Prefix+"p/{project}/skills/{asset}/v/{n}/files", u.authed(u.saveFile))
	m.HandleFunc("POST "+Prefix+"p/{project}/skills/{asset}/v/{n}/delete", u.authed(u.deleteFile))
	m.HandleFunc("POST "+Prefix+"p/{project}/skills/{asset}/v/{n}/upload", u.authed(u.upload))
}

// newDraft opens a draft from the live version, or from version "from"
// when the form names one.
func (u *UI) newDraft(w http.ResponseWriter, r *http.Request, s *session) {
	ref, err := u.resolve(r, s, r.PathValue("kind"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	base := quire.Base{Live: true}
	if from := r.PostFormValue("from"); from != "" && from != "live" {
		n, err := strconv.Atoi(from)
		if err != nil || n < 1 {
			u.fail(w, r, s, quire.Errorf(quire.EINVALID, "from must be a version number"))
			return
		}
		base = quire.Base{Version: n}
	}
	v, err := ref.h.CreateVersion(r.Context(), base)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, ref.Base()+"/v/"+strconv.Itoa(v.Number), http.StatusSeeOther)
}

func (u *UI) publish(w http.ResponseWriter, r *http.Request, s *session) {
	ref, n, err := u.resolveVersion(r, s, r.PathValue("kind"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	var o app.PublishOptions
	o.Override, o.Reason = overrideForm(r)
	if _, err := ref.h.PublishVersion(r.Context(), n, o); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, ref.Base()+"/v/"+strconv.Itoa(n), http.StatusSeeOther)
}

type editView struct {
	assetRef
	Version    *quire.Version
	Path       string // "" for a new file
	Content    string
	Executable bool
	CSRF       string
}

// editPage is the form for one file of a draft (or a new file). It
// carries the draft's commit, so a save over someone else's newer change
// is refused (412) rather than silently undoing it.
func (u *UI) editPage(w http.ResponseWriter, r *http.Request, s *session) {
	ref, ver, err := u.version(r, s, "skills")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	n := ver.Number
	v := editView{assetRef: ref, Version: ver, Path: r.PathValue("path"), CSRF: s.csrf}
	if v.Path != "" {
		content, f, err := ref.h.ReadFile(r.Context(), n, v.Path)
		if err != nil {
			u.fail(w, r, s, err)
			return
		}
		v.Executable = f.Mode == quire.ModeExecutable.String()
		if !isText(content) {
			u.fail(w, r, s, quire.Errorf(quire.EUNPROCESSABLE, "%s is not text; replace it with git or the API", v.Path))
			return
		}
		v.Content = string(content)
	}
	u.render(w, r, s, http.StatusOK, "edit", "Edit "+ref.Asset.Name+" v"+strconv.Itoa(n), v)
}

func (u *UI) saveFile(w http.ResponseWriter, r *http.Request, s *session) {
	ref, n, err := u.resolveVersion(r, s, "skills")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	path := strings.TrimSpace(r.PostFormValue("path"))
	// Browsers send textarea lines with CRLF; files keep the LF the
	// user sees.
	content := strings.ReplaceAll(r.PostFormValue("content"), "\r\n", "\n")
	// The form always says whether the file is executable: the box's
	// state is the file's mode.
	mode := quire.ModeRegular
	if r.PostFormValue("executable") == "on" {
		mode = quire.ModeExecutable
	}
	_, f, err := ref.h.UpsertFile(r.Context(), n, app.FileWrite{
		Path: path, Content: []byte(content), Message: strings.TrimSpace(r.PostFormValue("message")), IfMatch: r.PostFormValue("commit"), Mode: mode,
	})
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, ref.Base()+"/v/"+strconv.Itoa(n)+"/f/"+escapePath(f.Path), http.StatusSeeOther)
}

func (u *UI) deleteFile(w http.ResponseWriter, r *http.Request, s *session) {
	ref, n, err := u.resolveVersion(r, s, "skills")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	if _, err := ref.h.DeleteFile(r.Context(), n, r.PostFormValue("path"), r.PostFormValue("commit")); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, ref.Base()+"/v/"+strconv.Itoa(n), http.StatusSeeOther)
}
