package app

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/quire/quire"
	"github.com/quire/quire/render"
	"github.com/quire/quire/valid"
)

// The agents' view of quire (served over MCP): the live prompts and skills
// a credential can read across all its projects, named "project/slug",
// prompts rendered by that name with an optional version ("@3") or label
// ("#staging"), and the files of live skills with their digests.

// MaxAgentPage bounds one page of an agent listing.
const MaxAgentPage = 500

// PromptName is a parsed prompt name: "project/slug", optionally with
// "@N" (published version N) or "#label".
type PromptName struct {
	Project, Slug string
	Version       int    // 0: the live version (or Label's)
	Label         string // "": no label
}

// String is the name without a selector: "project/slug".
func (n PromptName) String() string { return n.Project + "/" + n.Slug }

// ParsePromptName parses "project/slug", "project/slug@3" or
// "project/slug#staging".
func ParsePromptName(s string) (PromptName, error) {
	var n PromptName
	bad := func(why string) (PromptName, error) {
		return PromptName{}, quire.Errorf(quire.EINVALID, "prompt name %q: %s; use project/slug, project/slug@3 or project/slug#label", s, why)
	}
	base := s
	if i := strings.IndexAny(s, "@#"); i >= 0 {
		base = s[:i]
		sel := s[i+1:]
		if s[i] == '@' {
			v, err := strconv.Atoi(sel)
			if err != nil || v <= 0 || strconv.Itoa(v) != sel {
				return bad("the version after @ must be a positive integer")
			}
			n.Version = v
		} else {
			if sel == "" || strings.ContainsAny(sel, "@#/") {
				return bad("the label after # is empty or malformed")
			}
			n.Label = sel
		}
	}
	project, slug, ok := strings.Cut(base, "/")
	if !ok || project == "" || slug == "" || strings.Contains(slug, "/") {
		return bad("it must be a project slug and a prompt slug joined by /")
	}
	n.Project, n.Slug = project, slug
	return n, nil
}

// AgentPrompt is one live prompt as an agent sees it.
type AgentPrompt struct {
	Name    string // "project/slug"
	Asset   *quire.Asset
	Project *quire.Project
	Version *quire.Version
	// Arguments are the variables a render takes, in template order;
	// shared by every caller for the commit, so never changed.
	Arguments []PromptArgument
}

// PromptArgument is one variable of a prompt. From the variables_schema
// when the version has one (its properties, required list, descriptions
// and types), otherwise from the templates' tags.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
	// JSON says the value is not a plain string (a section's list or
	// object, a placeholder's messages, a schema type other than
	// string): an agent passes it as JSON text.
	JSON bool
}

// agentCursor is where a listing across projects resumes: the project
// (by id, which never changes) and the store's cursor within it.
type agentCursor struct {
	Project string `json:"p"`
	Asset   string `json:"a,omitempty"`
}

func encodeAgentCursor(c agentCursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeAgentCursor(s string) (agentCursor, error) {
	var c agentCursor
	if s == "" {
		return c, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Project == "" {
		return c, quire.Errorf(quire.EINVALID, "cursor is not one this server gave")
	}
	return c, nil
}

// readableProjects are the projects p can read, ordered by id so that a
// cursor stays valid while projects are renamed. project, when set,
// narrows them to that one (id or slug).
func (a *App) readableProjects(ctx context.Context, p *quire.Principal, project string) ([]*quire.Project, error) {
	if project != "" {
		pr, err := a.Project(ctx, p, project, quire.AccessRead)
		if err != nil {
			return nil, err
		}
		return []*quire.Project{pr}, nil
	}
	all, err := a.meta.Projects(ctx)
	if err != nil {
		return nil, err
	}
	var out []*quire.Project
	for _, pr := range all {
		if p.ProjectAccess(pr) >= quire.AccessRead {
			out = append(out, pr)
		}
	}
	slices.SortFunc(out, func(x, y *quire.Project) int { return strings.Compare(x.ID, y.ID) })
	return out, nil
}

// eachAsset walks the assets of kind in the projects p can read (project
// narrows them), from cursor, calling keep for each until limit of them
// were kept; it returns the cursor after the last one visited ("" at the
// end). Assets keep refuses (no live version) do not count.
func (a *App) eachAsset(ctx context.Context, p *quire.Principal, kind quire.Kind, project, cursor string, limit int, keep func(*quire.Project, *quire.Asset) (bool, error)) (string, error) {
	if limit <= 0 || limit > MaxAgentPage {
		limit = MaxAgentPage
	}
	cur, err := decodeAgentCursor(cursor)
	if err != nil {
		return "", err
	}
	projects, err := a.readableProjects(ctx, p, project)
	if err != nil {
		return "", err
	}
	start := 0
	if cur.Project != "" {
		start = len(projects)
		for i, pr := range projects {
			if pr.ID >= cur.Project {
				start = i
				break
			}
		}
		if start < len(projects) && projects[start].ID != cur.Project {
			cur.Asset = "" // that project went away: start the next one
		}
	}
	kept := 0
	for i := start; i < len(projects); i++ {
		pr := projects[i]
		next := ""
		if i == start {
			next = cur.Asset
		}
		for {
			page, after, err := a.meta.AssetsPage(ctx, kind, pr.ID, quire.ListOptions{Limit: limit - kept, Cursor: next})
			if err != nil {
				return "", err
			}
			for _, as := range page {
				ok, err := keep(pr, as)
				if err != nil {
					return "", err
				}
				if ok {
					kept++
				}
			}
			next = after
			if kept >= limit {
				switch {
				case next != "":
					return encodeAgentCursor(agentCursor{Project: pr.ID, Asset: next}), nil
				case i+1 < len(projects):
					return encodeAgentCursor(agentCursor{Project: projects[i+1].ID}), nil
				}
				return "", nil
			}
			if next == "" {
				break
			}
		}
	}
	return "", nil
}

// AgentPrompts is a page (at most limit, MaxAgentPage) of the live
// prompts p can read, in every project or only in project, with the
// cursor of the next page ("" on the last). Prompts with no live version
// are not listed.
func (a *App) AgentPrompts(ctx context.Context, p *quire.Principal, project, cursor string, limit int) ([]AgentPrompt, string, error) {
	var out []AgentPrompt
	next, err := a.eachAsset(ctx, p, quire.KindPrompt, project, cursor, limit, func(pr *quire.Project, as *quire.Asset) (bool, error) {
		pv, err := a.prompts.LivePrompt(ctx, as)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		args, err := a.promptArguments(pv.Version, pv.Content)
		if err != nil {
			return false, nil // a live version that does not parse is not offered
		}
		out = append(out, AgentPrompt{Name: pr.Slug + "/" + as.Slug, Asset: as, Project: pr, Version: pv.Version, Arguments: args})
		return true, nil
	})
	return out, next, err
}

// promptArguments lists the arguments of the version at v holding c,
// worked out once per commit: listings and renders ask for them often.
func (a *App) promptArguments(v *quire.Version, c *quire.PromptContent) ([]PromptArgument, error) {
	cp, err := a.templates.get(v.Commit, c)
	if err != nil {
		return nil, err
	}
	cp.argsOnce.Do(func() { cp.args = argumentsOf(cp, c) })
	return cp.args, nil
}

// argumentsOf lists the arguments of compiled templates cp of content c:
// the schema's when there is one, else the templates' top-level
// variables in order.
func argumentsOf(cp *compiledPrompt, c *quire.PromptContent) []PromptArgument {
	if len(c.VariablesSchema) > 0 {
		if args, ok := schemaArguments(c.VariablesSchema); ok {
			return args
		}
	}
	vars := variablesOf(cp, c)
	required := map[string]bool{}
	for _, r := range vars.Required {
		required[topName(r)] = true
	}
	var out []PromptArgument
	seen := map[string]int{}
	for _, x := range vars.Variables {
		if x.Section != "" {
			continue // looked up in its section's value first
		}
		name := topName(x.Name)
		isJSON := x.Type != "variable" || name != x.Name
		if i, ok := seen[name]; ok {
			out[i].JSON = out[i].JSON || isJSON
			continue
		}
		seen[name] = len(out)
		out = append(out, PromptArgument{Name: name, Required: required[name], JSON: isJSON})
	}
	return out
}

// topName is the top-level name of a dotted variable name.
func topName(s string) string {
	if s == "." {
		return s
	}
	n, _, _ := strings.Cut(s, ".")
	return n
}

// schemaArguments reads the arguments from a variables_schema: its
// top-level properties (in the order the JSON gives them), descriptions
// and required list. ok is false for a schema without properties.
func schemaArguments(raw json.RawMessage) ([]PromptArgument, bool) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil || len(s.Properties) == 0 {
		return nil, false
	}
	// Decode the properties in order: a map would lose it.
	dec := json.NewDecoder(strings.NewReader(string(s.Properties)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []PromptArgument
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := t.(string)
		var prop struct {
			Description string `json:"description"`
			Type        any    `json:"type"`
		}
		if err := dec.Decode(&prop); err != nil {
			return nil, false
		}
		out = append(out, PromptArgument{
			Name: name, Description: prop.Description,
			Required: slices.Contains(s.Required, name),
			JSON:     prop.Type != "string",
		})
	}
	return out, true
}

// variablesOf lists the tags of compiled templates cp of content c: every
// variable once, and the names a render must be given.
func variablesOf(cp *compiledPrompt, c *quire.PromptContent) *PromptVariables {
	out := &PromptVariables{Variables: []render.Variable{}, Required: []string{}, Schema: c.VariablesSchema}
	seenVar, seenReq := map[render.Variable]bool{}, map[string]bool{}
	for _, t := range cp.all() {
		for _, x := range t.Variables() {
			if !seenVar[x] {
				seenVar[x] = true
				out.Variables = append(out.Variables, x)
			}
		}
		for _, r := range t.Required() {
			if !seenReq[r] {
				seenReq[r] = true
				out.Required = append(out.Required, r)
			}
		}
	}
	// A placeholder message is a variable too: the list of messages a
	// render splices in, always required.
	for _, m := range c.Messages {
		if x := (render.Variable{Name: m.Name, Type: quire.MessagePlaceholder}); m.Placeholder() && !seenVar[x] {
			seenVar[x] = true
			out.Variables = append(out.Variables, x)
			if !seenReq[m.Name] {
				seenReq[m.Name] = true
				out.Required = append(out.Required, m.Name)
			}
		}
	}
	return out
}

// NamedPrompt resolves a prompt name for p (read access): the prompt, its
// project, and the version the name selects (nil: the live one).
func (a *App) NamedPrompt(ctx context.Context, p *quire.Principal, name string) (*quire.Asset, *quire.Project, *int, error) {
	n, err := ParsePromptName(name)
	if err != nil {
		return nil, nil, nil, err
	}
	as, pr, err := a.ProjectAsset(ctx, p, n.Project, quire.KindPrompt, n.Slug, quire.AccessRead)
	if err != nil {
		return nil, nil, nil, err
	}
	switch {
	case n.Version > 0:
		v, err := a.versions.Version(ctx, as, n.Version)
		if err != nil {
			return nil, nil, nil, err
		}
		if v.State != quire.StatePublished {
			return nil, nil, nil, quire.Errorf(quire.ENOTFOUND, "%s has no published version %d (it is %s)", n, n.Version, v.State)
		}
		return as, pr, &n.Version, nil
	case n.Label != "":
		v, err := a.LabelVersion(ctx, as, n.Label)
		if err != nil {
			return nil, nil, nil, err
		}
		return as, pr, &v, nil
	}
	return as, pr, nil, nil
}

// LabelVersion is the published version label names on asset as (which
// the caller has been authorized to read): the label store's pointer. A
// label not set on as is ENOTFOUND.
func (a *App) LabelVersion(ctx context.Context, as *quire.Asset, label string) (int, error) {
	v, ok, err := a.labelAt(ctx, as, label)
	if err == nil && !ok {
		err = quire.Errorf(quire.ENOTFOUND, "%s has no label %q", as.Slug, label).WithDetail("label", label)
	}
	return v, err
}

// NamedPromptArguments are the arguments of the version name selects
// (see NamedPrompt), for a door that must convert argument strings.
func (a *App) NamedPromptArguments(ctx context.Context, as *quire.Asset, version *int) ([]PromptArgument, error) {
	var (
		v *quire.Version
		c *quire.PromptContent
	)
	if version != nil {
		var err error
		if v, err = a.versions.Version(ctx, as, *version); err != nil {
			return nil, err
		}
		if c, err = a.prompts.PromptContent(ctx, as, v.Commit); err != nil {
			return nil, err
		}
	} else {
		pv, err := a.prompts.LivePrompt(ctx, as)
		if err != nil {
			return nil, err
		}
		v, c = pv.Version, pv.Content
	}
	return a.promptArguments(v, c)
}

// SearchPrompts lists the live prompts p can read whose name, slug,
// project or description contains query (any case), at most limit.
func (a *App) SearchPrompts(ctx context.Context, p *quire.Principal, query string, limit int) ([]AgentPrompt, error) {
	if limit <= 0 || limit > MaxAgentPage {
		limit = MaxAgentPage
	}
	q := strings.ToLower(strings.TrimSpace(query))
	var out []AgentPrompt
	cursor := ""
	for {
		page, next, err := a.AgentPrompts(ctx, p, "", cursor, MaxAgentPage)
		if err != nil {
			return nil, err
		}
		for _, ap := range page {
			hay := strings.ToLower(ap.Name + "\n" + ap.Asset.Name + "\n" + ap.Asset.Description)
			if strings.Contains(hay, q) {
				out = append(out, ap)
				if len(out) == limit {
					return out, nil
				}
			}
		}
		if next == "" {
			return out, nil
		}
		cursor = next
	}
}

// AgentSkill is one live skill as an agent sees it: its SKILL.md front
// matter and every file with its size and SHA-256 digest.
type AgentSkill struct {
	Name        string // "project/slug"
	Asset       *quire.Asset
	Project     *quire.Project
	Version     *quire.Version
	Frontmatter map[string]any
	Files       []SkillFile
}

// SkillFile is one file of a live skill.
type SkillFile struct {
	Path   string
	Size   int64
	Digest string // "sha256:<hex>"
}

// skillDigests memoizes a live skill's front matter and file digests by
// commit: commits never change, and listing skills would otherwise read
// every file of every skill.
type skillDigests struct {
	frontmatter map[string]any
	files       []SkillFile
}

func newSkillMemo() *lru.Cache[string, *skillDigests] {
	c, _ := lru.New[string, *skillDigests](4096)
	return c
}

// AgentSkills is a page of the live skills p can read (all projects, or
// project), with the cursor of the next page.
func (a *App) AgentSkills(ctx context.Context, p *quire.Principal, project, cursor string, limit int) ([]AgentSkill, string, error) {
	var out []AgentSkill
	next, err := a.eachAsset(ctx, p, quire.KindSkill, project, cursor, limit, func(pr *quire.Project, as *quire.Asset) (bool, error) {
		s, err := a.agentSkill(ctx, pr, as)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		out = append(out, *s)
		return true, nil
	})
	return out, next, err
}

// AgentSkill is the live skill project/slug, which p must be able to read.
func (a *App) AgentSkill(ctx context.Context, p *quire.Principal, project, slug string) (*AgentSkill, error) {
	as, pr, err := a.ProjectAsset(ctx, p, project, quire.KindSkill, slug, quire.AccessRead)
	if err != nil {
		return nil, err
	}
	return a.agentSkill(ctx, pr, as)
}

func (a *App) agentSkill(ctx context.Context, pr *quire.Project, as *quire.Asset) (*AgentSkill, error) {
	v, err := a.versions.LiveVersion(ctx, as)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, quire.Errorf(quire.ENOTFOUND, "skill %s/%s has no live version", pr.Slug, as.Slug)
	}
	d, ok := a.skills.Get(v.Commit)
	if !ok {
		files, err := a.versions.ReadFiles(ctx, as, v.Number)
		if err != nil {
			return nil, err
		}
		d = &skillDigests{frontmatter: map[string]any{}}
		for path, b := range files {
			sum := sha256.Sum256(b)
			d.files = append(d.files, SkillFile{Path: path, Size: int64(len(b)), Digest: "sha256:" + hex.EncodeToString(sum[:])})
		}
		slices.SortFunc(d.files, func(x, y SkillFile) int { return strings.Compare(x.Path, y.Path) })
		if fm, err := valid.SkillFrontMatter(files[valid.SkillFile]); err == nil && fm != nil {
			d.frontmatter = fm
		}
		a.skills.Add(v.Commit, d)
	}
	return &AgentSkill{Name: pr.Slug + "/" + as.Slug, Asset: as, Project: pr, Version: v, Frontmatter: d.frontmatter, Files: d.files}, nil
}

// AgentSkillFile reads one file of the live version of skill
// project/slug for p (read access).
func (a *App) AgentSkillFile(ctx context.Context, p *quire.Principal, project, slug, path string) ([]byte, *quire.Version, error) {
	as, _, err := a.ProjectAsset(ctx, p, project, quire.KindSkill, slug, quire.AccessRead)
	if err != nil {
		return nil, nil, err
	}
	v, err := a.versions.LiveVersion(ctx, as)
	if err != nil {
		return nil, nil, err
	}
	if v == nil {
		return nil, nil, quire.Errorf(quire.ENOTFOUND, "skill %s/%s has no live version", project, slug)
	}
	b, _, err := a.versions.ReadFile(ctx, as, v.Number, path)
	return b, v, err
}

// OpenNamed opens the skill, or else the prompt, named project/slug for
// p with want: how an agent names what it changes (MCP's tools).
func (a *App) OpenNamed(ctx context.Context, p *quire.Principal, project, slug string, want quire.Access) (*Handle, error) {
	h, err := a.OpenIn(ctx, p, project, quire.KindSkill, slug, want)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		h, err = a.OpenIn(ctx, p, project, quire.KindPrompt, slug, want)
	}
	return h, err
}

// upsertPromptFile writes one file of draft n of the prompt: the draft's
// content with w's file replaced, parsed back as a prompt and written by
// UpdatePromptVersion (its checks, its event), on condition the draft
// has not moved since it was read. A prompt's files are its layout's
// (prompt.txt, messages/NNN-role.txt, config.json,
// variables.schema.json).
func (h *Handle) upsertPromptFile(ctx context.Context, n int, w FileWrite) (*quire.Version, quire.File, error) {
	a, as := h.app, h.Asset
	if !quire.IsPromptFile(w.Path) {
		return nil, quire.File{}, quire.Errorf(quire.EINVALID, "%q is not a prompt file: a prompt's files are %s, %s/NNN-role.txt, %s and %s",
			w.Path, quire.PromptTemplateFile, quire.PromptMessagesDir, quire.PromptConfigFile, quire.PromptSchemaFile)
	}
	v, err := a.versions.Version(ctx, as, n)
	if err != nil {
		return nil, quire.File{}, err
	}
	if v.State != quire.StateDraft {
		return nil, quire.File{}, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a draft can be changed", n, v.State)
	}
	cur, err := a.prompts.PromptContent(ctx, as, v.Commit)
	if err != nil {
		return nil, quire.File{}, err
	}
	laid, err := quire.PromptFiles(cur)
	if err != nil {
		return nil, quire.File{}, err
	}
	files := make(map[string][]byte, len(laid)+1)
	for _, f := range laid {
		files[f.Path] = f.Content
	}
	files[w.Path] = w.Content
	c, err := quire.ParsePromptFiles(files)
	if err != nil {
		return nil, quire.File{}, err
	}
	if c.Template != nil && len(c.Messages) > 0 {
		return nil, quire.File{}, quire.Errorf(quire.EUNPROCESSABLE, "a prompt has a template (%s) or messages (%s/), not both", quire.PromptTemplateFile, quire.PromptMessagesDir)
	}
	edit := PromptEdit{Template: c.Template, Model: &c.Model, ModelParams: c.ModelParams, VariablesSchema: c.VariablesSchema}
	if c.Template == nil {
		msgs := c.Messages
		edit.Messages = &msgs
	}
	edited, err := h.UpdatePromptVersion(ctx, n, edit, v.Commit)
	if err != nil {
		return nil, quire.File{}, err
	}
	return edited, quire.File{Path: w.Path, Size: int64(len(w.Content)), SHA: blobID(w.Content)}, nil
}

// RenderNamed renders the prompt name selects (see NamedPrompt) for p
// with vars, a JSON object (nil: none), and counts the render.
func (a *App) RenderNamed(ctx context.Context, p *quire.Principal, name string, vars json.RawMessage) (*quire.Asset, Rendered, error) {
	as, _, version, err := a.NamedPrompt(ctx, p, name)
	if err != nil {
		return nil, Rendered{}, err
	}
	v, err := a.DecodeVariables(vars, false)
	if err != nil {
		return nil, Rendered{}, err
	}
	out, err := a.render(ctx, as, RenderRequest{Vars: v, Version: version})
	return as, out, err
}

// RenderNamedArgs is RenderNamed with string arguments, as MCP's
// prompts/get sends them: an argument whose variable takes more than a
// string (PromptArgument.JSON) is read as JSON when it parses as such.
func (a *App) RenderNamedArgs(ctx context.Context, p *quire.Principal, name string, args map[string]string) (*quire.Asset, Rendered, error) {
	as, _, version, err := a.NamedPrompt(ctx, p, name)
	if err != nil {
		return nil, Rendered{}, err
	}
	// Which arguments take JSON matters only for a value that parses as
	// JSON: most are plain words, and the hot path skips the analysis.
	isJSON := map[string]bool{}
	for _, v := range args {
		if json.Valid([]byte(v)) {
			params, err := a.NamedPromptArguments(ctx, as, version)
			if err != nil {
				return nil, Rendered{}, err
			}
			for _, x := range params {
				isJSON[x.Name] = x.JSON
			}
			break
		}
	}
	v, err := a.argumentVars(args, isJSON)
	if err != nil {
		return nil, Rendered{}, err
	}
	out, err := a.render(ctx, as, RenderRequest{Vars: v, Version: version})
	return as, out, err
}

// argumentVars makes render variables of MCP's string arguments: a plain
// string as it is, one isJSON names as the JSON it holds, bounded by the
// variables limit as a render request's are. It builds the variables
// directly rather than encoding the arguments as a JSON object and
// decoding that: prompts/get is a hot path.
func (a *App) argumentVars(args map[string]string, isJSON map[string]bool) (render.Vars, error) {
	m := make(map[string]any, len(args))
	size := int64(2)
	for k, s := range args {
		size += int64(len(k)+len(s)) + 6 // quotes, colon, comma
		if isJSON[k] && json.Valid([]byte(s)) {
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			var x any
			if err := dec.Decode(&x); err != nil {
				return nil, quire.Errorf(quire.EINVALID, "argument %s is not a valid JSON value", k)
			}
			m[k] = x
			continue
		}
		m[k] = s
	}
	if size > a.limits.MaxVariables {
		return nil, quire.Errorf(quire.ETOOLARGE, "arguments are about %d bytes; the limit is %d", size, a.limits.MaxVariables)
	}
	return render.VarsOf(m), nil
}
