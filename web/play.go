package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/render"
)

// The prompt playground: a form with a field per top-level variable of a
// version (app.PromptVariables), plus a JSON object for the rest
// (sections, nested values); submitting renders through app.Render, the
// API's render, and shows the result and the partials used.

type playField struct {
	Name, Value string
}

type playView struct {
	assetRef
	Version  int // 0: the live version
	Versions []*quire.Version
	Fields   []playField
	Extra    string
	Required []string
	Result   *app.Rendered
	Error    string
	CSRF     string
}

func (u *UI) playRoutes() {
	u.mux.HandleFunc("GET "+Prefix+"p/{project}/prompts/{asset}/play", u.authed(u.play))
	u.mux.HandleFunc("POST "+Prefix+"p/{project}/prompts/{asset}/play", u.authed(u.play))
}

func (u *UI) play(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	ref, err := u.resolve(r, s, "prompts")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	v := playView{assetRef: ref, CSRF: s.csrf}
	if _, v.Versions, _, err = u.app.Versions(ctx, s.p, ref.Kind, ref.Asset.ID, "", quire.ListOptions{Limit: listLimit}); err != nil {
		u.fail(w, r, s, err)
		return
	}
	v.Version, _ = strconv.Atoi(r.FormValue("version"))
	n := v.Version
	if n == 0 {
		for _, ver := range v.Versions {
			if ver.Live {
				n = ver.Number
			}
		}
	}
	if n == 0 && len(v.Versions) > 0 {
		n = v.Versions[0].Number
	}
	if n == 0 {
		u.render(w, r, s, http.StatusOK, "play", "Try "+ref.Asset.Name, v)
		return
	}
	_, vars, err := u.app.PromptVariables(ctx, s.p, ref.Asset.ID, n)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	v.Required = vars.Required
	seen := map[string]bool{}
	for _, x := range vars.Variables {
		if x.Section == "" && x.Type == "variable" && !seen[x.Name] && !strings.Contains(x.Name, ".") {
			seen[x.Name] = true
			v.Fields = append(v.Fields, playField{Name: x.Name, Value: r.PostFormValue("var." + x.Name)})
		}
	}
	v.Extra = r.PostFormValue("extra")
	if r.Method != http.MethodPost {
		u.render(w, r, s, http.StatusOK, "play", "Try "+ref.Asset.Name, v)
		return
	}
	status := http.StatusOK
	res, err := u.app.Render(ctx, s.p, ref.Asset.ID, func() (app.RenderRequest, error) {
		m := map[string]any{}
		if strings.TrimSpace(v.Extra) != "" {
			dec := json.NewDecoder(strings.NewReader(v.Extra))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil || m == nil {
				return app.RenderRequest{}, quire.Errorf(quire.EINVALID, "more variables must be a JSON object")
			}
		}
		for _, f := range v.Fields {
			if f.Value != "" {
				m[f.Name] = f.Value
			}
		}
		ver := n
		return app.RenderRequest{Vars: render.VarsOf(m), Version: &ver}, nil
	})
	if err != nil {
		// A render error (a missing variable, bad JSON) belongs beside
		// the form, not on an error page.
		status, v.Error = statusOf(err)
	} else {
		v.Result = &res
	}
	u.render(w, r, s, status, "play", "Try "+ref.Asset.Name, v)
}
