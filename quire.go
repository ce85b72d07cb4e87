// Package quire holds the domain types of quire, a server for versioned
// prompt templates and agent skills kept in bare git repositories, and the
// interfaces between its packages: gitstore implements the stores, cache
// wraps them and keeps sessions, httpapi serves them.
package quire

import (
	"context"
	"strconv"
	"time"
)

// Kind says which sort of asset a repository holds.
type Kind string

const (
	KindSkill  Kind = "skill"
	KindPrompt Kind = "prompt"
)

// Plural is the kind's name in URLs and on disk ("skills", "prompts").
func (k Kind) Plural() string { return string(k) + "s" }

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return k == KindSkill || k == KindPrompt }

// Actor is who a change is made by; it becomes the author of the commit.
// UserID and KeyID name the credential; a push records them, since its
// commits keep the authors the client wrote.
type Actor struct {
	Name   string
	Email  string
	UserID string
	KeyID  string // "" unless an API key acts
}

// User is a person who logs in.
type User struct {
	ID           string    `json:"id"`
	Email        string    `json:"email"`
	Name         string    `json:"name"`
	Role         UserRole  `json:"role"`
	PasswordHash string    `json:"password_hash,omitempty"`
	Disabled     bool      `json:"disabled,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// UserRole is a user's global role.
type UserRole string

const (
	RoleAdmin  UserRole = "admin"
	RoleMember UserRole = "member"
)

// Project groups skills and prompts and says who may reach them.
type Project struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Slug        string   `json:"slug"`
	Description string   `json:"description"`
	Members     []Member `json:"members"`
	// Visibility is private (members only, the default) or public
	// (anyone may read the published versions, without a credential).
	Visibility Visibility `json:"visibility"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	CreatedBy  string     `json:"created_by,omitempty"`
	// ReviewPolicy is the project's publish rule (reviews); nil is the
	// default, no approvals required.
	ReviewPolicy *ReviewPolicy `json:"review_policy,omitempty"`
}

// Visibility says who may read a project without being a member.
type Visibility string

const (
	Private Visibility = "private"
	Public  Visibility = "public"
)

// Valid reports whether v is a known visibility ("" counts as private).
func (v Visibility) Valid() bool { return v == "" || v == Private || v == Public }

// MarshalText writes "" (a project stored before visibility existed) as
// private, so clients always see one of the two values.
func (v Visibility) MarshalText() ([]byte, error) {
	if v == "" {
		return []byte(Private), nil
	}
	return []byte(v), nil
}

// UnmarshalText reads what MarshalText wrote. With both, gob (the
// metadata snapshot) and JSON round-trip a Visibility; app validates the
// values clients send.
func (v *Visibility) UnmarshalText(b []byte) error {
	*v = Visibility(b)
	return nil
}

// Public reports whether anonymous callers may read p's published versions.
func (p *Project) Public() bool { return p.Visibility == Public }

// Member gives a user a role in a project.
type Member struct {
	UserID string      `json:"user_id"`
	Role   ProjectRole `json:"role"`
}

// Role returns the role userID holds in p, or "" when none.
func (p *Project) Role(userID string) ProjectRole {
	for _, m := range p.Members {
		if m.UserID == userID {
			return m.Role
		}
	}
	return ""
}

// Asset is a skill or a prompt: the metadata of one bare repository.
type Asset struct {
	ID          string    `json:"id"`
	ProjectID   string    `json:"project_id"`
	Kind        Kind      `json:"-"`
	Name        string    `json:"name"`
	Slug        string    `json:"slug"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	CreatedBy   string    `json:"created_by,omitempty"`
}

// Skill and Prompt are the two kinds of asset.
type (
	Skill  = Asset
	Prompt = Asset
)

// VersionState is where a version is in its life.
type VersionState string

const (
	StateDraft     VersionState = "draft"
	StatePublished VersionState = "published"
	StateArchived  VersionState = "archived"
)

// Version is one numbered version of an asset.
type Version struct {
	AssetID     string       `json:"-"`
	Kind        Kind         `json:"-"`
	Number      int          `json:"version"`
	State       VersionState `json:"state"`
	Live        bool         `json:"live"`
	Commit      string       `json:"commit"`
	Base        int          `json:"base_version,omitempty"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
	CreatedBy   string       `json:"created_by"`
	PublishedAt *time.Time   `json:"published_at,omitempty"`
	ArchivedAt  *time.Time   `json:"archived_at,omitempty"`
}

// File is one file of a version, without its content.
type File struct {
	Path string `json:"file_path"`
	Size int64  `json:"size"`
	SHA  string `json:"sha"`
	// Mode is "100644", or "100755" for an executable file.
	Mode string `json:"mode,omitempty"`
}

// FileContent is a file to write. Mode zero keeps the mode the file has
// (regular for a new file).
type FileContent struct {
	Path    string
	Content []byte
	Mode    FileMode
}

// FileMode is a file's git mode: quire keeps regular and executable
// files (no symlinks, no submodules), as git writes them in a tree.
type FileMode uint32

const (
	ModeRegular    FileMode = 0o100644
	ModeExecutable FileMode = 0o100755
)

// String is the mode as git and the API write it ("100644").
func (m FileMode) String() string { return strconv.FormatUint(uint64(m), 8) }

// ParseFileMode reads "100644" or "100755"; anything else is EINVALID.
func ParseFileMode(s string) (FileMode, error) {
	switch s {
	case "100644":
		return ModeRegular, nil
	case "100755":
		return ModeExecutable, nil
	}
	return 0, Errorf(EINVALID, "mode must be \"100644\" (a regular file) or \"100755\" (an executable one)")
}

// Snapshot is one version's whole content at its commit, files sorted
// by path (byte order).
type Snapshot struct {
	Version int
	State   VersionState
	Commit  string
	Time    time.Time // the commit's time, stamped on every archive entry
	Files   []SnapshotFile
}

// SnapshotFile is one file of a Snapshot.
type SnapshotFile struct {
	Path       string
	Content    []byte
	Executable bool // git mode 100755
}

// Commit is one entry of a repository's history.
type Commit struct {
	ID        string    `json:"id"`
	Author    string    `json:"author"`
	Email     string    `json:"email"`
	Message   string    `json:"message"`
	Time      time.Time `json:"time"`
	Version   int       `json:"version,omitempty"`
	Ref       string    `json:"ref,omitempty"`
	AssetID   string    `json:"asset_id,omitempty"`
	AssetKind Kind      `json:"kind,omitempty"`
	// PushedBy, on commits that came by git push and on the push's own
	// record, is the credential that pushed: Author and Email are what
	// the commit claims, PushedBy is who quire let in.
	PushedBy *Pusher `json:"pushed_by,omitempty"`
}

// Pusher is the credential of a git push.
type Pusher struct {
	UserID string `json:"user_id"`
	Email  string `json:"email"`
	KeyID  string `json:"key_id,omitempty"`
}

// FileDiff is the unified diff of one file between two versions.
type FileDiff struct {
	Path   string `json:"file_path"`
	Status string `json:"status"` // added, deleted, modified
	Patch  string `json:"patch"`
}

// Base says what a new draft starts from.
type Base struct {
	Live    bool // the live version (the default)
	Empty   bool // an empty tree
	Version int  // a given version
}

// Limits bound what clients may store.
type Limits struct {
	MaxBody         int64 // one JSON body
	MaxFile         int64 // one file
	MaxVersionFiles int   // files in a version
	MaxVersionBytes int64 // bytes in a version
	MaxVariables    int64 // a payload's variables, as JSON
	MaxName         int   // names, in characters
}

// DefaultLimits are the limits of DESIGN.md §3.
func DefaultLimits() Limits {
	return Limits{
		MaxBody:         2 << 20,
		MaxFile:         1 << 20,
		MaxVersionFiles: 1000,
		MaxVersionBytes: 10 << 20,
		MaxVariables:    64 << 10,
		MaxName:         200,
	}
}

// ListOptions pages through a list.
type ListOptions struct {
	Limit  int
	Cursor string
}

// MetaStore keeps users, API keys, projects and asset metadata.
type MetaStore interface {
	CreateUser(ctx context.Context, by Actor, u *User) error
	User(ctx context.Context, id string) (*User, error)
	UserByEmail(ctx context.Context, email string) (*User, error)
	Users(ctx context.Context) ([]*User, error)
	UpdateUser(ctx context.Context, by Actor, u *User) error
	DeleteUser(ctx context.Context, by Actor, id string) error

	CreateAPIKey(ctx context.Context, by Actor, k *APIKey) error
	APIKey(ctx context.Context, id string) (*APIKey, error)
	APIKeys(ctx context.Context, userID string) ([]*APIKey, error)
	UpdateAPIKey(ctx context.Context, by Actor, k *APIKey) error
	DeleteAPIKey(ctx context.Context, by Actor, id string) error

	CreateProject(ctx context.Context, by Actor, p *Project) error
	// Project finds a project by id or slug.
	Project(ctx context.Context, idOrSlug string) (*Project, error)
	Projects(ctx context.Context) ([]*Project, error)
	UpdateProject(ctx context.Context, by Actor, p *Project) error
	DeleteProject(ctx context.Context, by Actor, id string) error

	CreateAsset(ctx context.Context, by Actor, a *Asset) error
	Asset(ctx context.Context, kind Kind, id string) (*Asset, error)
	// FindAssets returns the assets whose id or slug is idOrSlug.
	FindAssets(ctx context.Context, kind Kind, idOrSlug string) ([]*Asset, error)
	// Assets lists a project's assets of kind, ordered by slug.
	Assets(ctx context.Context, kind Kind, projectID string) ([]*Asset, error)
	// AssetsPage is a page of Assets and the cursor of the next ("" on
	// the last page); it costs the page, not the project or the store.
	AssetsPage(ctx context.Context, kind Kind, projectID string, opts ListOptions) ([]*Asset, string, error)
	UpdateAsset(ctx context.Context, by Actor, a *Asset) error
	DeleteAsset(ctx context.Context, by Actor, a *Asset) error
}

// VersionStore keeps the versions and files of assets, one bare git
// repository per asset.
type VersionStore interface {
	CreateVersion(ctx context.Context, by Actor, a *Asset, base Base, files []FileContent) (*Version, error)
	Versions(ctx context.Context, a *Asset) ([]*Version, error)
	// VersionsPage is a page of Versions in state ("" for any) and the
	// cursor of the next ("" on the last page); it reads the versions up
	// to the page's end, not all of them.
	VersionsPage(ctx context.Context, a *Asset, state VersionState, opts ListOptions) ([]*Version, string, error)
	Version(ctx context.Context, a *Asset, n int) (*Version, error)
	LiveVersion(ctx context.Context, a *Asset) (*Version, error)
	DeleteVersion(ctx context.Context, by Actor, a *Asset, n int) error
	// PublishVersion publishes draft n after check approves its files.
	PublishVersion(ctx context.Context, by Actor, a *Asset, n int, check func(ReadFunc) error) (*Version, error)
	PromoteVersion(ctx context.Context, by Actor, a *Asset, n int) (*Version, error)
	ArchiveVersion(ctx context.Context, by Actor, a *Asset, n int) (*Version, error)

	// PutFiles writes files into draft n as one commit. ifMatch, when set,
	// must equal the draft's current commit.
	PutFiles(ctx context.Context, by Actor, a *Asset, n int, files []FileContent, ifMatch, message string) (*Version, error)
	DeleteFile(ctx context.Context, by Actor, a *Asset, n int, path, ifMatch string) (*Version, error)
	Files(ctx context.Context, a *Asset, n int) ([]File, error)
	ReadFile(ctx context.Context, a *Asset, n int, path string) ([]byte, File, error)
	ReadFiles(ctx context.Context, a *Asset, n int) (map[string][]byte, error)
	// Snapshot reads version n whole: commit, commit time, files with
	// their modes, in path order.
	Snapshot(ctx context.Context, a *Asset, n int) (*Snapshot, error)
	Diff(ctx context.Context, a *Asset, from, to int) ([]FileDiff, error)
	History(ctx context.Context, a *Asset, opts ListOptions) ([]Commit, string, error)

	// RemoveRepository deletes an asset's repository.
	RemoveRepository(ctx context.Context, a *Asset) error
}

// ReadFunc reads one file of a version; found is false when it is absent.
type ReadFunc func(path string) (content []byte, found bool, err error)
