package quire

import "context"

// TreeStore is a version store that can set a draft's whole content in
// one commit: the files given are written, every other path is deleted
// (quire push). app finds it on the VersionStore.
type TreeStore interface {
	ReplaceFiles(ctx context.Context, by Actor, a *Asset, n int, files []FileContent, ifMatch, message string) (*Version, error)
}
