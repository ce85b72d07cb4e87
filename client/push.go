package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quire/quire/skillpack"
)

// ReplaceFiles sets the whole content of draft n from a zip of its files
// as one commit (what quire push does): files added and changed, paths
// the zip lacks deleted; nothing is committed when nothing differs.
// ifMatchCommit, when set, is the commit the draft must be at (412
// otherwise); message the commit message ("" lets the server write one).
func (c *Client) ReplaceFiles(ctx context.Context, ref string, n int, zip []byte, message, ifMatchCommit string) (*SkillVersion, error) {
	var q url.Values
	if message != "" {
		q = url.Values{"message": {message}}
	}
	return unwrap[SkillVersion](ctx, c, request{method: "PUT", path: versionPath("skills", ref, n, "/files"), query: q, body: zip, ctype: "application/zip", headers: ifMatch(ifMatchCommit)}, "version")
}

// ArchiveInfo is what HEAD of a skill archive tells without its bytes.
type ArchiveInfo struct {
	Digest  string // "sha256:<hex>" of the archive's bytes
	Version int
	Commit  string
}

// SkillArchiveInfo asks which version and commit version (a number,
// "live" or a label) of a skill resolves to, with a HEAD of its archive:
// a client that already holds that commit need not download it.
func (c *Client) SkillArchiveInfo(ctx context.Context, ref, version string, f skillpack.Format) (*ArchiveInfo, error) {
	res, err := c.send(ctx, request{method: http.MethodHead, path: assetPath("skills", ref) + p("/versions/", version, "/archive."+string(f))})
	if err != nil {
		return nil, err
	}
	info := &ArchiveInfo{Digest: strings.Trim(res.header.Get("ETag"), `"`), Commit: res.header.Get("X-Quire-Commit")}
	if info.Version, err = strconv.Atoi(res.header.Get("X-Quire-Version")); err != nil || info.Commit == "" {
		return nil, fmt.Errorf("client: HEAD archive of %s@%s: no X-Quire-Version or X-Quire-Commit", ref, version)
	}
	return info, nil
}

// PushSkillVersion opens a new draft from the live version whose one
// commit holds exactly the zip's files (what quire push does without
// --draft): an upload with ?from=live. message is the commit message
// ("" for the server's).
func (c *Client) PushSkillVersion(ctx context.Context, ref string, zip []byte, message string) (*SkillVersion, error) {
	q := url.Values{"from": {"live"}}
	if message != "" {
		q.Set("message", message)
	}
	return unwrap[SkillVersion](ctx, c, request{method: "POST", path: assetPath("skills", ref) + "/versions/upload", query: q, body: zip, ctype: "application/zip"}, "version")
}
