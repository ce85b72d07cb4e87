package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"

	"github.com/quire/quire"
)

// LiveFile is one file of a live version with its SHA-256, so a client
// installing a skill can verify what it fetched without knowing git's
// blob ids.
type LiveFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// LiveVersion resolves asset ref of kind for p (read access) and returns
// its live version; none live is ENOTFOUND.
func (h *Handle) LiveVersion(ctx context.Context) (*quire.Version, error) {
	a, as := h.app, h.Asset
	if err := h.need(quire.AccessRead); err != nil {
		return nil, err
	}
	v, err := a.versions.LiveVersion(ctx, as)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// LiveFiles lists the files of published version n of as, sorted by
// path, with their sizes and digests. Published versions never change,
// so the list is the live one's as long as n is live.
func (a *App) LiveFiles(ctx context.Context, as *quire.Asset, n int) ([]LiveFile, error) {
	files, err := a.versions.ReadFiles(ctx, as, n)
	if err != nil {
		return nil, err
	}
	out := make([]LiveFile, 0, len(files))
	for p, b := range files {
		sum := sha256.Sum256(b)
		out = append(out, LiveFile{Path: p, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
