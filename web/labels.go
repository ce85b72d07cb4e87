package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// Moving and deleting labels (app.SetLabel, app.DeleteLabel), and editing
// a prompt draft's content (app.UpdatePromptVersion).

func (u *UI) labelRoutes() {
	m := u.mux
	m.HandleFunc("POST "+Prefix+"p/{project}/{kind}/{asset}/labels", u.authed(u.setLabel))
	m.HandleFunc("POST "+Prefix+"p/{project}/{kind}/{asset}/labels/{name}/delete", u.authed(u.deleteLabel))
	m.HandleFunc("GET "+Prefix+"p/{project}/prompts/{asset}/v/{n}/edit", u.authed(u.promptEditPage))
	m.HandleFunc("POST "+Prefix+"p/{project}/prompts/{asset}/v/{n}/edit", u.authed(u.savePrompt))
}

func (u *UI) setLabel(w http.ResponseWriter, r *http.Request, s *session) {
	ref, err := u.resolve(r, s, r.PathValue("kind"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	if err := ref.h.Need(quire.AccessWrite); err != nil {
		u.fail(w, r, s, err) // before the form is read
		return
	}
	n, err := strconv.Atoi(r.PostFormValue("version"))
	if err != nil || n < 1 {
		u.fail(w, r, s, quire.Errorf(quire.EINVALID, "version must be a version number"))
		return
	}
	e := app.LabelEdit{Version: &n}
	e.Override, e.Reason = overrideForm(r)
	if _, err := ref.h.SetLabel(r.Context(), strings.TrimSpace(r.PostFormValue("name")), e); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, ref.Base(), http.StatusSeeOther)
}

// overrideForm is an owner's override as the forms that offer it send
// it: the override box and its reason. The app checks who may.
func overrideForm(r *http.Request) (bool, string) {
	return r.PostFormValue("override") == "on", strings.TrimSpace(r.PostFormValue("reason"))
}

func (u *UI) deleteLabel(w http.ResponseWriter, r *http.Request, s *session) {
	ref, err := u.resolve(r, s, r.PathValue("kind"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	var e app.LabelDelete
	e.Override, e.Reason = overrideForm(r)
	if err := ref.h.DeleteLabel(r.Context(), r.PathValue("name"), e); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, ref.Base(), http.StatusSeeOther)
}

type promptEditView struct {
	assetRef
	Version                    *quire.Version
	Chat                       bool
	Template, Messages         string
	Model, ModelParams, Schema string
	CSRF                       string
}

func (u *UI) promptEditPage(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	ref, ver, err := u.version(r, s, "prompts")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	n := ver.Number
	c, err := u.app.PromptContent(ctx, ref.Asset, ver.Commit)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	v := promptEditView{assetRef: ref, Version: ver, Chat: c.Chat(), Model: c.Model,
		ModelParams: indentJSON(c.ModelParams), Schema: indentJSON(c.VariablesSchema), CSRF: s.csrf}
	if c.Template != nil {
		v.Template = *c.Template
	}
	if c.Chat() {
		b, _ := json.MarshalIndent(c.Messages, "", "  ")
		v.Messages = string(b)
	}
	u.render(w, r, s, http.StatusOK, "promptedit", "Edit "+ref.Asset.Name+" v"+strconv.Itoa(n), v)
}

// savePrompt sets what the form holds: the template (or the messages, a
// JSON array, for a chat prompt), the model and its parameters, and the
// variables schema (empty removes it). The draft's commit from the form
// is the precondition, so a newer change is not silently undone.
func (u *UI) savePrompt(w http.ResponseWriter, r *http.Request, s *session) {
	ref, n, err := u.resolveVersion(r, s, "prompts")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	if err := ref.h.Need(quire.AccessWrite); err != nil {
		u.fail(w, r, s, err) // before the form is read
		return
	}
	e, err := promptForm(r)
	if err == nil {
		_, err = ref.h.UpdatePromptVersion(r.Context(), n, e, r.PostFormValue("commit"))
	}
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, ref.Base()+"/v/"+strconv.Itoa(n), http.StatusSeeOther)
}

// promptForm reads the prompt edit form.
func promptForm(r *http.Request) (app.PromptEdit, error) {
	var e app.PromptEdit
	model := strings.TrimSpace(r.PostFormValue("model"))
	e.Model = &model
	if r.PostFormValue("chat") == "1" {
		var msgs []quire.Message
		if err := json.Unmarshal([]byte(r.PostFormValue("messages")), &msgs); err != nil {
			return e, quire.Errorf(quire.EINVALID, "messages must be a JSON array of {role, content}")
		}
		e.Messages = &msgs
	} else {
		t := strings.ReplaceAll(r.PostFormValue("template"), "\r\n", "\n")
		e.Template = &t
	}
	params := strings.TrimSpace(r.PostFormValue("model_params"))
	if params == "" {
		params = "{}"
	}
	if !json.Valid([]byte(params)) {
		return e, quire.Errorf(quire.EINVALID, "model parameters must be JSON")
	}
	e.ModelParams = json.RawMessage(params)
	schema := strings.TrimSpace(r.PostFormValue("variables_schema"))
	if schema == "" {
		schema = "null"
	}
	if !json.Valid([]byte(schema)) {
		return e, quire.Errorf(quire.EINVALID, "the variables schema must be JSON")
	}
	e.VariablesSchema = json.RawMessage(schema)
	return e, nil
}
