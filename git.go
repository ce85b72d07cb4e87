package quire

import (
	"context"
	"io"
	"strings"
)

// Git services, as smart HTTP names them in ?service= and in its URLs.
const (
	GitUploadPack  = "git-upload-pack"  // clone and fetch
	GitReceivePack = "git-receive-pack" // push
)

// GitProtocolVersion returns the wire protocol version a git client asks
// for in its Git-Protocol header ("version=2", parameters separated by
// colons): 2, or 0 for anything else (protocol v1 is v0 with a banner,
// and quire answers it as v0).
func GitProtocolVersion(header string) int {
	for _, p := range strings.Split(header, ":") {
		if p == "version=2" {
			return 2
		}
	}
	return 0
}

// GitService serves asset repositories over git's smart protocol in its
// stateless form, one request and one response, as smart HTTP carries it
// (DESIGN.md §6). gitstore implements it; httpapi maps URLs, credentials
// and errors onto it.
//
// A method returns a quire error only when it has written nothing; once a
// response has started, failures are reported in the git protocol itself
// (an ERR line or a side-band error), which the git client prints.
type GitService interface {
	// AdvertiseRefs writes the body of GET info/refs?service=service: the
	// "# service=" preamble, then the refs and capabilities; for
	// upload-pack with protocol 2, the protocol v2 capabilities instead.
	AdvertiseRefs(ctx context.Context, a *Asset, service string, protocol int, w io.Writer) error
	// UploadPack answers one upload-pack request: a negotiation round, or
	// the pack once the client is done; with protocol 2, one v2 command
	// (ls-refs or fetch).
	UploadPack(ctx context.Context, a *Asset, protocol int, r io.Reader, w io.Writer) error
	// ReceivePack applies one push and writes its report.
	ReceivePack(ctx context.Context, p GitPush, r io.Reader, w io.Writer) error
}

// GitPush is who pushes into which asset's repository, and the push's
// use case (app.Push) as the protocol calls it.
type GitPush struct {
	Asset *Asset
	By    Actor
	// Hooks decide what the push may do and record what it did; nil
	// admits every update the protocol accepts and records nothing.
	Hooks PushHooks
}

// PushHooks is a push's use case as the git protocol calls it at each
// step of a receive-pack (gitproto.ReceivePack), as soft-serve's hooks
// are: the protocol reads the commands, the pack and the objects' rules;
// the hooks decide which draft moves are allowed and what they mean.
// app.Push implements them.
type PushHooks interface {
	// Refused is why the caller may not push to this repository at all
	// (a credential that may only read), or nil. Every ref update is then
	// refused with its message; the pack is read and discarded, so the
	// client gets the report.
	Refused() error
	// Admit decides the move of draft m.Version from m.Old to m.New,
	// reading the draft through refs under the repository's write lock;
	// its error refuses the update with its message.
	Admit(refs DraftRefs, m DraftMove) error
	// Moving hears of the drafts the push is about to move, before any
	// moves (app records its intents); an error refuses the push.
	Moving(ctx context.Context, moves []DraftMove) error
	// Moved hears of the drafts the push moved before the report is
	// written (app records their events); an error turns the report's
	// "ok" lines into errors. After Moving, it is called even when
	// nothing moved; failed is the error that stopped the ref updates
	// midway, if one did.
	Moved(ctx context.Context, moves []DraftMove, failed error) error
	// Options hears the push options (git push -o) once the push moved
	// drafts (their numbers); the lines it returns are shown to the
	// client (git's "remote:" lines).
	Options(ctx context.Context, options []string, drafts []int) []string
}

// DraftRefs is an asset's repository as PushHooks.Admit reads it, under
// the push's write lock.
type DraftRefs interface {
	// Draft is version n's state and commit; ENOTFOUND when there is no
	// version n.
	Draft(n int) (VersionState, string, error)
	// IsAncestor reports whether commit old is new or an ancestor of it.
	IsAncestor(old, new string) (bool, error)
}

// publishedOnlyKey marks a git read limited to published versions.
type publishedOnlyKey struct{}

// WithPublishedOnly marks ctx as a git read by a caller who may see the
// published versions only (an anonymous reader of a public project):
// the GitService then advertises, and serves wants reachable from, main
// and the tags of published versions alone. It travels in the context
// because it is a property of the request, decided by httpapi after
// authorization, and keeps GitService's methods as git's protocol has
// them.
func WithPublishedOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, publishedOnlyKey{}, true)
}

// PublishedOnly reports whether ctx is a git read limited to published
// versions (WithPublishedOnly).
func PublishedOnly(ctx context.Context) bool {
	v, _ := ctx.Value(publishedOnlyKey{}).(bool)
	return v
}

// DraftMove is one draft a push moved, from commit Old to New.
type DraftMove struct {
	Version  int
	Old, New string
}

// ProjectRepoStore keeps each project's own repository: a read-only view
// of the live versions of its skills, one commit per change
// (gitstore/projectrepo.go).
type ProjectRepoStore interface {
	// SyncProject makes project pr's repository hold the live version
	// of each of skills, as one commit by by with message msg when
	// anything differs; it returns that commit ("" for none).
	SyncProject(ctx context.Context, by Actor, pr *Project, skills []*Asset, msg string) (string, error)
	// ApplyProjectChange applies one change to the repository as it
	// stands, as one commit ("" when it changes nothing); skills are
	// the project's skills, to make a repository that is missing.
	ApplyProjectChange(ctx context.Context, by Actor, pr *Project, skills []*Asset, ch ProjectChange, msg string) (string, error)
	// HasProjectRepo reports whether project pr's repository exists.
	HasProjectRepo(pr *Project) bool
}

// ProjectChange is one change of what a project has live: skill Skill,
// whose slug is Slug, is now at Commit (of its repository), or gone when
// Commit is empty; OldSlug, when set, is the slug it had before.
type ProjectChange struct {
	Skill   *Asset
	Slug    string
	OldSlug string
	Commit  string
}

// ProjectRepo is the pseudo-asset that names project id's own repository
// where the git protocol and the stores address a repository as an asset;
// it is no skill or prompt (KindProject).
func ProjectRepo(projectID string) *Asset {
	return &Asset{ID: "project", ProjectID: projectID, Kind: KindProject, Name: "project", Slug: "project"}
}
