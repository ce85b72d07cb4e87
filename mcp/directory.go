package mcp

import (
	"context"
	"path"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/valid"
)

// resources/directory/read, the Skills Extension's optional method
// (declared with directoryRead: true): the direct children of a
// directory of a live skill, the skill's own (skill://project/slug) or
// one below it, files with their resource metadata and subdirectories as
// inode/directory resources, in path order, pages of at most 500.

// directoryMIME is the mime type of a directory resource.
const directoryMIME = "inode/directory"

// ReadDirectoryParams are resources/directory/read's parameters.
type ReadDirectoryParams struct {
	sdk.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// ReadDirectoryResult is resources/directory/read's answer.
type ReadDirectoryResult struct {
	sdk.ResultBase
	// The cache hint: the extension's directory listing is a resource
	// list, which carries one from 2026-07-28 on.
	sdk.Cacheable
	ResultType string          `json:"resultType"`
	Resources  []*sdk.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

func (s *Server) readDirectory(ctx context.Context, params *ReadDirectoryParams) (*ReadDirectoryResult, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if params == nil || params.URI == "" {
		return nil, rpcError(quire.Errorf(quire.EINVALID, "uri is required: skill://{project}/{slug}[/{dir}]"))
	}
	project, slug, dir, err := parseSkillURI(strings.TrimSuffix(params.URI, "/"))
	if err != nil {
		return nil, rpcError(err)
	}
	sk, err := s.app.AgentSkill(ctx, p, project, slug)
	if err != nil {
		return nil, s.fail(err)
	}
	children, err := directoryChildren(sk, dir)
	if err != nil {
		return nil, rpcError(quire.Errorf(quire.ENOTFOUND, "%s: %s", params.URI, err.Error()))
	}
	start := 0
	if params.Cursor != "" {
		start, err = strconv.Atoi(params.Cursor)
		if err != nil || start < 0 || start > len(children) {
			return nil, rpcError(quire.Errorf(quire.EINVALID, "cursor is not one this server gave"))
		}
	}
	end := min(start+app.MaxAgentPage, len(children))
	out := &ReadDirectoryResult{Cacheable: listCache, ResultType: resultComplete, Resources: children[start:end]}
	if end < len(children) {
		out.NextCursor = strconv.Itoa(end)
	}
	return out, nil
}

// directoryChildren lists the direct children of directory dir ("" for
// the root) of skill sk; an error when dir is a file or not there.
func directoryChildren(sk *app.AgentSkill, dir string) ([]*sdk.Resource, error) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	out := []*sdk.Resource{}
	found := dir == ""
	lastDir := ""
	for _, f := range sk.Files { // sorted by path
		if f.Path == dir {
			return nil, errNotDirectory
		}
		rest, ok := strings.CutPrefix(f.Path, prefix)
		if !ok {
			continue
		}
		found = true
		if sub, _, nested := strings.Cut(rest, "/"); nested {
			if sub != lastDir {
				lastDir = sub
				out = append(out, &sdk.Resource{URI: fileURI(sk.Project.Slug, sk.Asset.Slug, prefix+sub), Name: sub, MIMEType: directoryMIME})
			}
			continue
		}
		r := fileResource(sk, f)
		if f.Path != valid.SkillFile { // its name is the skill's, as resources/list has it
			r.Name = path.Base(f.Path)
		}
		out = append(out, r)
	}
	if !found {
		return nil, errNoDirectory
	}
	return out, nil
}

var (
	errNotDirectory = quire.Errorf(quire.ENOTFOUND, "not a directory resource: a file of the skill")
	errNoDirectory  = quire.Errorf(quire.ENOTFOUND, "no such directory in the skill's live version")
)
