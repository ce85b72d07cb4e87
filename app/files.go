package app

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strconv"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
	"github.com/quire/quire/zipfile"
)

// The files of a skill version: upload a zip as a new draft, write, list,
// read and delete files of a draft, download a version as a zip.

// UploadVersion opens a draft of the skill holding the files of a zip
// archive, data. It returns the number of files imported too.
func (h *Handle) UploadVersion(ctx context.Context, data []byte) (*quire.Version, int, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needSkill(quire.AccessWrite); err != nil {
		return nil, 0, err
	}
	files, err := zipfile.Read(data, a.limits)
	if err != nil {
		return nil, 0, err
	}
	v, err := write(ctx, a, a.assetEvent(quire.EventVersionCreated, p.Actor(), as, 0, ""),
		func(ctx context.Context) (*quire.Version, error) {
			return a.versions.CreateVersion(ctx, p.Actor(), as, quire.Base{Empty: true}, files)
		},
		a.versionMade(quire.EventVersionCreated, p.Actor(), as))
	if err != nil {
		return nil, 0, err
	}
	return v, len(files), nil
}

// FileWrite is one file written into a draft.
type FileWrite struct {
	Path    string
	Content []byte
	// Message is the commit message; the store writes one when empty.
	Message string
	// IfMatch, when set, is the commit the draft must be at ("*" for any).
	IfMatch string
	// Mode is the file's mode; zero keeps the one it has (regular for a
	// new file).
	Mode quire.FileMode
}

// UpsertFile creates or replaces one file of draft n: any file of a
// skill's, one of its layout's of a prompt's (upsertPromptFile). It
// returns the version after the write and the file as written.
func (h *Handle) UpsertFile(ctx context.Context, n int, w FileWrite) (*quire.Version, quire.File, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.need(quire.AccessWrite); err != nil {
		return nil, quire.File{}, err
	}
	if as.Kind == quire.KindPrompt {
		return h.upsertPromptFile(ctx, n, w)
	}
	if err := valid.FilePath(w.Path); err != nil {
		return nil, quire.File{}, err
	}
	if err := valid.Text("message", w.Message, valid.MaxDescription(a.limits)); err != nil {
		return nil, quire.File{}, err
	}
	f := quire.FileContent{Path: w.Path, Content: w.Content, Mode: w.Mode}
	v, err := write(ctx, a, a.assetEvent(quire.EventVersionUpdated, p.Actor(), as, n, ""),
		func(ctx context.Context) (*quire.Version, error) {
			return a.versions.PutFiles(ctx, p.Actor(), as, n, []quire.FileContent{f}, precondition(w.IfMatch), w.Message)
		},
		a.versionMade(quire.EventVersionUpdated, p.Actor(), as))
	if err != nil {
		return nil, quire.File{}, err
	}
	out := quire.File{Path: f.Path, Size: int64(len(f.Content)), SHA: blobID(f.Content)}
	if f.Mode != 0 {
		out.Mode = f.Mode.String()
	}
	return v, out, nil
}

// DeleteFile removes one file from draft n of skill ref.
func (h *Handle) DeleteFile(ctx context.Context, n int, path, ifMatch string) (*quire.Version, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needSkill(quire.AccessWrite); err != nil {
		return nil, err
	}
	v, err := write(ctx, a, a.assetEvent(quire.EventVersionUpdated, p.Actor(), as, n, ""),
		func(ctx context.Context) (*quire.Version, error) {
			return a.versions.DeleteFile(ctx, p.Actor(), as, n, path, precondition(ifMatch))
		},
		a.versionMade(quire.EventVersionUpdated, p.Actor(), as))
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Files lists the files of version n of skill ref.
func (h *Handle) Files(ctx context.Context, n int) ([]quire.File, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needSkill(quire.AccessRead); err != nil {
		return nil, err
	}
	if err := a.readableVersion(ctx, p, as, n); err != nil {
		return nil, err
	}
	return a.versions.Files(ctx, as, n)
}

// ReadFile returns one file of version n of skill ref, with its record
// (the blob id is its ETag).
func (h *Handle) ReadFile(ctx context.Context, n int, path string) ([]byte, quire.File, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needSkill(quire.AccessRead); err != nil {
		return nil, quire.File{}, err
	}
	if err := a.readableVersion(ctx, p, as, n); err != nil {
		return nil, quire.File{}, err
	}
	return a.versions.ReadFile(ctx, as, n, path)
}

// DownloadVersion returns version n of skill ref as a zip archive, its
// files under a folder named for the skill's slug (where Agent Skills
// expect them).
func (h *Handle) DownloadVersion(ctx context.Context, n int) ([]byte, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needSkill(quire.AccessRead); err != nil {
		return nil, err
	}
	if err := a.readableVersion(ctx, p, as, n); err != nil {
		return nil, err
	}
	files, err := a.versions.ReadFiles(ctx, as, n)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := zipfile.Write(&buf, as.Slug, files); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// blobID is the git blob id of content, so a client can match a file
// against what git shows without another request.
func blobID(content []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}
