package web

import (
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// maxUpload bounds the body of an upload form; each file is then held to
// the store's own limit by app.UpsertFile.
const maxUpload = 64 << 20

// upload writes the files of a multipart form (any bytes: images, PDFs,
// archives) into a skill draft, under an optional folder, each through
// app.UpsertFile. The form carries the draft's commit, so an upload over
// a newer change is refused (412); each file after the first is written
// on top of the one before.
func (u *UI) upload(w http.ResponseWriter, r *http.Request, s *session) {
	ref, n, err := u.resolveVersion(r, s, "skills")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	if r.MultipartForm == nil || len(r.MultipartForm.File["files"]) == 0 {
		u.fail(w, r, s, quire.Errorf(quire.EINVALID, "choose at least one file to upload"))
		return
	}
	dir := strings.Trim(strings.TrimSpace(r.PostFormValue("dir")), "/")
	commit := r.PostFormValue("commit")
	last := ""
	for _, fh := range r.MultipartForm.File["files"] {
		f, err := fh.Open()
		if err != nil {
			u.fail(w, r, s, quire.Errorf(quire.EINVALID, "cannot read the upload of %s", fh.Filename))
			return
		}
		content, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			u.fail(w, r, s, quire.Errorf(quire.EINVALID, "cannot read the upload of %s", fh.Filename))
			return
		}
		// A browser sends the base name; some send a path: keep its base.
		name := path.Base(strings.ReplaceAll(fh.Filename, "\\", "/"))
		if dir != "" {
			name = dir + "/" + name
		}
		ver, file, err := ref.h.UpsertFile(r.Context(), n, app.FileWrite{Path: name, Content: content, IfMatch: commit, Message: "Upload " + name})
		if err != nil {
			u.fail(w, r, s, err)
			return
		}
		commit, last = ver.Commit, file.Path
	}
	http.Redirect(w, r, ref.Base()+"/v/"+strconv.Itoa(n)+"/f/"+escapePath(last), http.StatusSeeOther)
}
