package app

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/quire/quire"
)

// editingPrompts applies edits to the content of each commit and answers
// the edited version at a new commit.
type editingPrompts struct {
	fakePrompts
	got *quire.PromptContent
}

func (e *editingPrompts) EditPrompt(_ context.Context, _ quire.Actor, _ *quire.Asset, n int, edit func(*quire.PromptContent) *quire.PromptContent, _ string) (*quire.Version, error) {
	e.got = edit(contents[versions[n].Commit])
	return &quire.Version{Number: n, Commit: "edited", State: quire.StateDraft}, nil
}

var updateCases = []struct {
	name    string
	n       int
	edit    PromptEdit
	ifMatch string
	code    quire.Code
	check   func(*quire.PromptContent) bool
}{
	{name: "template replaces nothing else", n: 3, edit: PromptEdit{Template: ptr("Hi {{x}}")},
		check: func(c *quire.PromptContent) bool {
			return *c.Template == "Hi {{x}}" && c.Model == "m3" && c.Messages == nil
		}},
	{name: "messages and model", n: 3, edit: PromptEdit{Messages: &[]quire.Message{{Role: "user", Content: "hi"}}, Model: ptr("m9")},
		check: func(c *quire.PromptContent) bool { return c.Template == nil && len(c.Messages) == 1 && c.Model == "m9" }},
	{name: "model params", n: 3, edit: PromptEdit{ModelParams: json.RawMessage(`{"t":2}`)},
		check: func(c *quire.PromptContent) bool { return string(c.ModelParams) == `{"t":2}` }},
	{name: "if-match the draft's commit", n: 3, ifMatch: "c3", edit: PromptEdit{Model: ptr("m")}},
	{name: "if-match another commit", n: 3, ifMatch: "c1", edit: PromptEdit{Model: ptr("m")}, code: quire.EPRECONDITION},
	{name: "published version", n: 2, edit: PromptEdit{Model: ptr("m")}, code: quire.ECONFLICT},
	{name: "unknown version", n: 9, edit: PromptEdit{Model: ptr("m")}, code: quire.ENOTFOUND},
	{name: "template and messages", n: 3, edit: PromptEdit{Template: ptr("a"), Messages: &[]quire.Message{{Role: "user"}}}, code: quire.EINVALID},
	{name: "no messages", n: 3, edit: PromptEdit{Messages: &[]quire.Message{}}, code: quire.EINVALID},
	{name: "bad role", n: 3, edit: PromptEdit{Messages: &[]quire.Message{{Role: "User"}}}, code: quire.EINVALID},
	{name: "model params not an object", n: 3, edit: PromptEdit{ModelParams: json.RawMessage(`[1]`)}, code: quire.EINVALID},
}

func TestUpdatePromptVersion(t *testing.T) {
	for _, tc := range updateCases {
		t.Run(tc.name, func(t *testing.T) {
			store := &editingPrompts{}
			a := New(Config{Meta: fakeMeta{}, Versions: fakeVersions{}, Prompts: store})
			v, err := prompt(t, a, "p1").UpdatePromptVersion(context.Background(), tc.n, tc.edit, tc.ifMatch)
			if tc.code != "" {
				if quire.ErrorCode(err) != tc.code || store.got != nil {
					t.Fatalf("err = %v, edited %v; want %s and no edit", err, store.got, tc.code)
				}
				return
			}
			if err != nil || v.Commit != "edited" {
				t.Fatalf("%v, %v", v, err)
			}
			if tc.check != nil && !tc.check(store.got) {
				t.Fatalf("edited content %+v", store.got)
			}
		})
	}
}
