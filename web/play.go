package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/render"
)

// The prompt playground: a form generated from a version's variables --
// from its typed variables_schema when it has one (a text, number,
// checkbox, choice or JSON field per top-level property), else a text
// field per top-level variable of its templates (app.PromptVariables) --
// plus a JSON object for the rest. A sample payload fills the form;
// submitting renders through app.Render, the API's render, and shows the
// result, the model and the partials used; the values can be saved as a
// new payload (app.CreatePayload). With a model provider configured, a
// writer can also run the version (app.RunPrompt, the API's run), and a
// second version beside it with the same values.

// playField is one generated control.
type playField struct {
	Name, Value string
	// Kind is text, number, boolean, choice or json.
	Kind        string
	Choices     []string
	Description string
	Required    bool
}

type playView struct {
	assetRef
	Version  int // 0: the live version
	Versions []*quire.Version
	Payloads []*quire.Payload
	Payload  string // the payload the form was filled from
	Fields   []playField
	Extra    string
	Required []string
	Typed    bool // the fields come from the variables schema
	Result   *app.Rendered
	Error    string
	Saved    string // the name of a payload just saved
	CSRF     string
	// CanRun: a model provider is configured; Writer: the caller may
	// run (a run spends the operator's money, so readers may not).
	CanRun, Writer bool
	Compare        int // the version run beside the chosen one (0: none)
	Runs           []playRun
	runErr         []error
}

// playRun is one version's run: its answer or why there is none.
type playRun struct {
	Version int
	Run     *app.Run
	Error   string
}

func (u *UI) playRoutes() {
	u.mux.HandleFunc("GET "+Prefix+"p/{project}/prompts/{asset}/play", u.authed(u.play))
	u.mux.HandleFunc("POST "+Prefix+"p/{project}/prompts/{asset}/play", u.authed(u.play))
}

// schemaProp is the part of a JSON Schema property a form field needs.
type schemaProp struct {
	Type        any    `json:"type"`
	Enum        []any  `json:"enum"`
	Description string `json:"description"`
}

// fieldsOf builds the form: from the schema's top-level properties
// (sorted by name; required first), or from the template's variables.
func fieldsOf(vars *app.PromptVariables) (fields []playField, typed bool) {
	var schema struct {
		Properties map[string]schemaProp `json:"properties"`
		Required   []string              `json:"required"`
	}
	if len(vars.Schema) > 0 && json.Unmarshal(vars.Schema, &schema) == nil && len(schema.Properties) > 0 {
		req := map[string]bool{}
		for _, r := range schema.Required {
			req[r] = true
		}
		for name, p := range schema.Properties {
			f := playField{Name: name, Kind: "text", Description: p.Description, Required: req[name]}
			t, _ := p.Type.(string)
			if list, ok := p.Type.([]any); ok && len(list) > 0 {
				t, _ = list[0].(string)
			}
			switch {
			case len(p.Enum) > 0:
				f.Kind = "choice"
				for _, e := range p.Enum {
					f.Choices = append(f.Choices, scalarText(e))
				}
			case t == "number" || t == "integer":
				f.Kind = "number"
			case t == "boolean":
				f.Kind = "boolean"
			case t == "object" || t == "array":
				f.Kind = "json"
			}
			fields = append(fields, f)
		}
		sort.Slice(fields, func(i, j int) bool {
			if fields[i].Required != fields[j].Required {
				return fields[i].Required
			}
			return fields[i].Name < fields[j].Name
		})
		return fields, true
	}
	seen := map[string]bool{}
	req := map[string]bool{}
	for _, r := range vars.Required {
		req[r] = true
	}
	for _, x := range vars.Variables {
		if x.Section == "" && x.Type == "variable" && !seen[x.Name] && !strings.Contains(x.Name, ".") {
			seen[x.Name] = true
			fields = append(fields, playField{Name: x.Name, Kind: "text", Required: req[x.Name]})
		}
	}
	return fields, false
}

// scalarText is how a JSON value shows in a form field.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// value turns a field's text into the JSON value it stands for; ok is
// false for an empty optional field, which is left out.
func (f playField) value() (any, bool, error) {
	s := f.Value
	switch f.Kind {
	case "boolean":
		return s == "true", true, nil
	case "number":
		if strings.TrimSpace(s) == "" {
			return nil, false, nil
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return nil, false, quire.Errorf(quire.EINVALID, "%s must be a number", f.Name)
		}
		return json.Number(strings.TrimSpace(s)), true, nil
	case "json":
		if strings.TrimSpace(s) == "" {
			return nil, false, nil
		}
		var v any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, false, quire.Errorf(quire.EINVALID, "%s must be JSON", f.Name)
		}
		return v, true, nil
	}
	if s == "" {
		return nil, false, nil
	}
	return s, true, nil
}

// variables gathers the form into one JSON object: the "more variables"
// object first, then each field that has a value.
func (v *playView) variables() (map[string]any, error) {
	m := map[string]any{}
	if strings.TrimSpace(v.Extra) != "" {
		dec := json.NewDecoder(strings.NewReader(v.Extra))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil || m == nil {
			return nil, quire.Errorf(quire.EINVALID, "more variables must be a JSON object")
		}
	}
	for _, f := range v.Fields {
		val, ok, err := f.value()
		if err != nil {
			return nil, err
		}
		if ok {
			m[f.Name] = val
		}
	}
	return m, nil
}

// fill sets the form from a payload's variables: a field per known
// name, the rest into the JSON object.
func (v *playView) fill(raw json.RawMessage) {
	m := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&m) != nil {
		return
	}
	for i := range v.Fields {
		f := &v.Fields[i]
		if x, ok := m[f.Name]; ok {
			if f.Kind == "json" {
				b, _ := json.MarshalIndent(x, "", "  ")
				f.Value = string(b)
			} else {
				f.Value = scalarText(x)
			}
			delete(m, f.Name)
		}
	}
	if len(m) > 0 {
		b, _ := json.MarshalIndent(m, "", "  ")
		v.Extra = string(b)
	}
}

func (u *UI) play(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	ref, err := u.resolve(r, s, "prompts")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	v := playView{assetRef: ref, CSRF: s.csrf, CanRun: u.app.CanRun(), Writer: s.p.ProjectAccess(ref.Project) >= quire.AccessWrite}
	if v.Versions, _, err = ref.h.Versions(ctx, "", quire.ListOptions{Limit: listLimit}); err != nil {
		u.fail(w, r, s, err)
		return
	}
	title := "Try " + ref.Asset.Name
	v.Version, _ = strconv.Atoi(r.FormValue("version"))
	n := v.Version
	if n == 0 {
		if lv, err := ref.h.LiveVersion(ctx); err == nil {
			n = lv.Number
		}
	}
	if n == 0 && len(v.Versions) > 0 {
		n = v.Versions[0].Number
	}
	if n == 0 {
		u.render(w, r, s, http.StatusOK, "play", title, v)
		return
	}
	vars, err := ref.h.PromptVariables(ctx, n)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	v.Required = vars.Required
	v.Fields, v.Typed = fieldsOf(vars)
	if v.Payloads, _, err = ref.h.Payloads(ctx, quire.ListOptions{Limit: listLimit}); err != nil {
		u.fail(w, r, s, err)
		return
	}
	if r.Method != http.MethodPost {
		// A GET may name a payload to fill the form from.
		if id := r.URL.Query().Get("payload"); id != "" {
			pl, err := ref.h.Payload(ctx, id)
			if err != nil {
				u.fail(w, r, s, err)
				return
			}
			v.Payload = pl.ID
			v.fill(pl.Variables)
		}
		u.render(w, r, s, http.StatusOK, "play", title, v)
		return
	}
	for i := range v.Fields {
		f := &v.Fields[i]
		f.Value = r.PostFormValue("var." + f.Name)
		// A checkbox sends "true" after its hidden "false".
		if f.Kind == "boolean" && slices.Contains(r.PostForm["var."+f.Name], "true") {
			f.Value = "true"
		}
	}
	v.Extra = r.PostFormValue("extra")
	status := http.StatusOK
	if r.PostFormValue("action") == "save" {
		pl, err := u.savePayload(ctx, r, ref.h, &v)
		if err != nil {
			status, v.Error = statusOf(err)
		} else {
			v.Saved, v.Payload = pl.Name, pl.ID
			v.Payloads = append(v.Payloads, pl)
		}
		u.render(w, r, s, status, "play", title, v)
		return
	}
	if r.PostFormValue("action") == "run" {
		v.Compare, _ = strconv.Atoi(r.PostFormValue("compare"))
		u.runs(w, r, s, &v, n)
		u.render(w, r, s, v.runStatus(w), "play", title, v)
		return
	}
	m, err := v.variables()
	var res app.Rendered
	if err == nil {
		res, err = ref.h.Render(ctx, app.RenderRequest{Vars: render.VarsOf(m), Version: &n})
	}
	if err != nil {
		// A render error (a missing variable, bad JSON) belongs beside
		// the form, not on an error page.
		status, v.Error = statusOf(err)
	} else {
		v.Result = &res
	}
	u.render(w, r, s, status, "play", title, v)
}

// savePayload saves the form's values as a payload named by the form.
func (u *UI) savePayload(ctx context.Context, r *http.Request, h *app.Handle, v *playView) (*quire.Payload, error) {
	if err := h.Need(quire.AccessWrite); err != nil {
		return nil, err // before the form is read
	}
	m, err := v.variables()
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(m)
	name := strings.TrimSpace(r.PostFormValue("payload_name"))
	return h.CreatePayload(ctx, app.PayloadInput{Variables: raw, Name: &name})
}

// runs runs version n, and v.Compare beside it when set, with the form's
// values; both calls go out at once, so the slower sets the wait.
func (u *UI) runs(w http.ResponseWriter, r *http.Request, s *session, v *playView, n int) {
	if err := v.h.Need(quire.AccessWrite); err != nil {
		_, v.Error = statusOf(err) // before the form is read
		v.runErr = []error{err}
		return
	}
	m, err := v.variables()
	if err != nil {
		_, v.Error = statusOf(err)
		v.runErr = []error{err}
		return
	}
	vars := render.VarsOf(m)
	nums := []int{n}
	if v.Compare > 0 && v.Compare != n {
		nums = append(nums, v.Compare)
	}
	v.Runs = make([]playRun, len(nums))
	errs := make([]error, len(nums))
	var wg sync.WaitGroup
	for i, num := range nums {
		wg.Go(func() {
			run, err := v.h.RunPrompt(r.Context(), app.VersionRef{Number: num}, app.RunRequest{Vars: vars})
			v.Runs[i], errs[i] = playRun{Version: num, Run: run}, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			v.Runs[i].Error = runMessage(err)
		}
	}
	v.runErr = errs
}

// runStatus is the page's status after runs: 200 when a run answered,
// else the first failure's, as the API would answer it (with its
// Retry-After).
func (v *playView) runStatus(w http.ResponseWriter) int {
	var first error
	for _, err := range v.runErr {
		if err == nil {
			return http.StatusOK
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		return http.StatusOK
	}
	status, _ := statusOf(first)
	if secs, ok := retryAfter(first); ok {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	return status
}

// runMessage says why a run failed. A provider's failure is the
// provider's to explain (statusOf hides a 5xx's message, which here is
// quire's own text naming the provider and its answer).
func runMessage(err error) string {
	switch quire.ErrorCode(err) {
	case quire.EPROVIDER:
		return quire.ErrorMessage(err)
	case quire.EUNAVAILABLE:
		if secs, ok := retryAfter(err); ok {
			return fmt.Sprintf("%s: try again in %d s.", quire.ErrorMessage(err), secs)
		}
	}
	_, msg := statusOf(err)
	return msg
}

// retryAfter is the wait a provider's rate limit asked for.
func retryAfter(err error) (int, bool) {
	d := quire.ErrorDetails(err)
	if _, ok := d["provider"]; !ok || quire.ErrorCode(err) != quire.EUNAVAILABLE {
		return 0, false
	}
	secs, ok := d["retry_after"].(int)
	return secs, ok
}
