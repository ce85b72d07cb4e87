package app

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// A prompt with live version 2 (a text template) and version 1 (chat
// messages), and one payload.
const (
	payloadID = "0b7e8a52-4f65-4c1e-9d53-6a8f0f0c2a11"
	otherID   = "9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"
)

var (
	liveText = "Hello {{name}}, about {{topic}}."
	versions = map[int]*quire.Version{
		1: {Number: 1, Commit: "c1", State: quire.StatePublished},
		2: {Number: 2, Commit: "c2", State: quire.StatePublished},
		3: {Number: 3, Commit: "c3", State: quire.StateDraft},
	}
	contents = map[string]*quire.PromptContent{
		"c1": {Messages: []quire.Message{{Role: "system", Content: "You know {{topic}}."}, {Role: "user", Content: "I am {{name}} ({{mood}})."}}, Model: "m1", ModelParams: json.RawMessage(`{"t":1}`)},
		"c2": {Template: &liveText, Model: "m2", ModelParams: json.RawMessage(`{}`)},
		"c3": {Model: "m3"}, // a draft with neither template nor messages
	}
)

// fakePrompts serves contents, with version 2 live.
type fakePrompts struct{ quire.PromptStore }

func (fakePrompts) LiveCommit(context.Context, *quire.Asset) (string, error) { return "c2", nil }
func (fakePrompts) LivePrompt(context.Context, *quire.Asset) (*quire.PromptVersion, error) {
	return &quire.PromptVersion{Version: versions[2], Content: contents["c2"]}, nil
}
func (fakePrompts) PromptContent(_ context.Context, _ *quire.Asset, commit string) (*quire.PromptContent, error) {
	return contents[commit], nil
}

type fakeVersions struct{ quire.VersionStore }

func (fakeVersions) Version(_ context.Context, _ *quire.Asset, n int) (*quire.Version, error) {
	if v := versions[n]; v != nil {
		return v, nil
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "version %d not found", n)
}

type fakePayloads struct{ quire.PayloadStore }

func (fakePayloads) Payload(_ context.Context, _ *quire.Asset, id string) (*quire.Payload, error) {
	if id == payloadID {
		return &quire.Payload{ID: id, Variables: json.RawMessage(`{"name":"Payload","topic":"payloads","mood":"calm"}`)}, nil
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "payload not found")
}

// countingUsage records renders, or fails every one when fail is set.
type countingUsage struct {
	quire.Usage
	renders []string
	fail    bool
}

func (u *countingUsage) RecordRender(_ context.Context, promptID string, version int) error {
	if u.fail {
		return errors.New("redis down")
	}
	u.renders = append(u.renders, promptID+"@"+string(rune('0'+version)))
	return nil
}

// fakeMeta holds any prompt asked for, by its id, in project pr1, where
// user u1 is an owner: the use cases resolve and authorize through it.
type fakeMeta struct{ quire.MetaStore }

func (fakeMeta) FindAssets(_ context.Context, kind quire.Kind, ref string) ([]*quire.Asset, error) {
	return []*quire.Asset{{ID: ref, Slug: ref, Kind: kind, ProjectID: "pr1"}}, nil
}

func (fakeMeta) Project(_ context.Context, ref string) (*quire.Project, error) {
	if ref != "pr1" {
		return nil, quire.Errorf(quire.ENOTFOUND, "project not found")
	}
	return &quire.Project{ID: "pr1", Slug: "pr1", Members: []quire.Member{{UserID: "u1", Role: quire.ProjectOwner}}}, nil
}

// owner is the principal of the use case tests: an owner of project pr1.
var owner = &quire.Principal{User: &quire.User{ID: "u1"}}

// prompt opens prompt ref as owner: a use case test's handle.
func prompt(t testing.TB, a *App, ref string) *Handle {
	t.Helper()
	h, err := a.Open(context.Background(), owner, quire.KindPrompt, ref, quire.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func newRenderApp(u quire.Usage, lost func(context.Context, string, int, error)) *App {
	return New(Config{Meta: fakeMeta{}, Versions: fakeVersions{}, Prompts: fakePrompts{}, Payloads: fakePayloads{}, Usage: u, UsageLost: lost})
}

func ptr[T any](v T) *T { return &v }

var renderCases = []struct {
	name      string
	req       RenderRequest
	version   int
	text      string
	messages  []string
	model     string
	code      quire.Code
	errSubstr string
}{
	{name: "live by default", req: RenderRequest{Vars: render.Vars{"name": "Ann", "topic": "caching"}},
		version: 2, text: "Hello Ann, about caching.", model: "m2"},
	{name: "explicit version over live", req: RenderRequest{Version: ptr(1), Vars: render.Vars{"name": "Ann", "topic": "git", "mood": "glad"}},
		version: 1, messages: []string{"system: You know git.", "user: I am Ann (glad)."}, model: "m1"},
	{name: "payload alone", req: RenderRequest{PayloadID: payloadID, Vars: render.Vars{}},
		version: 2, text: "Hello Payload, about payloads.", model: "m2"},
	{name: "request variables over the payload's", req: RenderRequest{PayloadID: payloadID, Vars: render.Vars{"name": "Ann"}},
		version: 2, text: "Hello Ann, about payloads.", model: "m2"},
	{name: "payload with an explicit version", req: RenderRequest{Version: ptr(1), PayloadID: payloadID, Vars: render.Vars{"mood": "cross"}},
		version: 1, messages: []string{"system: You know payloads.", "user: I am Payload (cross)."}, model: "m1"},
	{name: "nil variables", req: RenderRequest{PayloadID: payloadID},
		version: 2, text: "Hello Payload, about payloads.", model: "m2"},
	{name: "version zero", req: RenderRequest{Version: ptr(0)}, code: quire.EINVALID, errSubstr: "positive integer"},
	{name: "negative version", req: RenderRequest{Version: ptr(-3)}, code: quire.EINVALID},
	{name: "unknown version", req: RenderRequest{Version: ptr(9)}, code: quire.ENOTFOUND},
	{name: "version without a template", req: RenderRequest{Version: ptr(3)}, code: quire.EUNPROCESSABLE, errSubstr: "version 3 has no template"},
	{name: "payload id not a UUID", req: RenderRequest{PayloadID: "nope"}, code: quire.ENOTFOUND, errSubstr: "payload not found"},
	{name: "unknown payload", req: RenderRequest{PayloadID: otherID}, code: quire.ENOTFOUND},
	{name: "missing variable", req: RenderRequest{Vars: render.Vars{"name": "Ann"}}, code: quire.EUNPROCESSABLE, errSubstr: "missing variables: topic"},
	{name: "missing variables of every message at once", req: RenderRequest{Version: ptr(1), Vars: render.Vars{}},
		code: quire.EUNPROCESSABLE, errSubstr: "missing variables: topic, name, mood"},
}

func TestRender(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			u := &countingUsage{}
			a := newRenderApp(u, nil)
			got, err := prompt(t, a, "p1").Render(context.Background(), tc.req)
			if tc.code != "" {
				if quire.ErrorCode(err) != tc.code || !strings.Contains(quire.ErrorMessage(err), tc.errSubstr) {
					t.Fatalf("err = %v (%s), want %s containing %q", err, quire.ErrorCode(err), tc.code, tc.errSubstr)
				}
				if len(u.renders) != 0 {
					t.Fatalf("a failed render was counted: %v", u.renders)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.PromptID != "p1" || got.Version != tc.version || got.Commit != versions[tc.version].Commit || got.Model != tc.model {
				t.Fatalf("rendered version %d at %s model %q, want %d at %s model %q", got.Version, got.Commit, got.Model, tc.version, versions[tc.version].Commit, tc.model)
			}
			switch {
			case tc.text != "":
				if got.Text == nil || *got.Text != tc.text || got.Messages != nil {
					t.Fatalf("text = %v, messages %v; want %q", got.Text, got.Messages, tc.text)
				}
			default:
				var msgs []string
				for _, m := range got.Messages {
					msgs = append(msgs, m.Role+": "+m.Content)
				}
				if got.Text != nil || !reflect.DeepEqual(msgs, tc.messages) {
					t.Fatalf("messages = %q, text %v; want %q", msgs, got.Text, tc.messages)
				}
			}
			if want := []string{"p1@" + string(rune('0'+tc.version))}; !reflect.DeepEqual(u.renders, want) {
				t.Fatalf("usage = %v, want %v", u.renders, want)
			}
		})
	}
}

// TestRenderMergeKeepsPayload checks a merge leaves the payload's own
// variables as they were: a render must not change what the next one
// merges under.
func TestRenderMergeKeepsPayload(t *testing.T) {
	base := render.Vars{"name": "Payload", "topic": "payloads"}
	got := render.Merge(base, render.Vars{"name": "Ann"})
	if got["name"] != "Ann" || got["topic"] != "payloads" || base["name"] != "Payload" {
		t.Fatalf("merged %v over base now %v", got, base)
	}
}

// TestRenderUsageLost checks a render whose count fails still succeeds,
// and the failure goes to UsageLost.
func TestRenderUsageLost(t *testing.T) {
	var lost []error
	a := newRenderApp(&countingUsage{fail: true}, func(_ context.Context, promptID string, version int, err error) {
		if promptID != "p1" || version != 2 {
			t.Errorf("lost %s@%d", promptID, version)
		}
		lost = append(lost, err)
	})
	if _, err := prompt(t, a, "p1").Render(context.Background(), RenderRequest{Vars: render.Vars{"name": "a", "topic": "b"}}); err != nil {
		t.Fatal(err)
	}
	if len(lost) != 1 {
		t.Fatalf("UsageLost heard %d failures, want 1", len(lost))
	}
	// Without usage at all, nothing is counted and nothing is lost.
	if _, err := prompt(t, newRenderApp(nil, nil), "p1").Render(context.Background(), RenderRequest{Vars: render.Vars{"name": "a", "topic": "b"}}); err != nil {
		t.Fatal(err)
	}
}

// TestTemplateMemo checks parsed templates are kept by commit, and a
// template that does not parse is not kept.
func TestTemplateMemo(t *testing.T) {
	tm := newTemplateMemo()
	first, err := tm.get("c2", contents["c2"])
	if err != nil {
		t.Fatal(err)
	}
	// Other content under the same commit cannot happen; the memo trusts
	// the commit and answers what it parsed first.
	again, err := tm.get("c2", contents["c1"])
	if err != nil || again != first {
		t.Fatalf("second get = %p, %v; want the first %p", again, err, first)
	}
	bad := "{{#open}}"
	if _, err := tm.get("bad", &quire.PromptContent{Template: &bad}); quire.ErrorCode(err) != quire.EUNPROCESSABLE {
		t.Fatalf("bad template: %v", err)
	}
	if _, ok := tm.m["bad"]; ok {
		t.Fatal("a template that does not parse was memoized")
	}
	msgs := &quire.PromptContent{Messages: []quire.Message{{Role: "user", Content: "ok"}, {Role: "user", Content: "{{/x}}"}}}
	if _, err := tm.get("badmsg", msgs); err == nil || !strings.Contains(quire.ErrorMessage(err), "messages[1]") {
		t.Fatalf("bad message: %v", err)
	}
}

var decodeVariablesCases = []struct {
	name     string
	raw      string
	required bool
	want     render.Vars
	code     quire.Code
}{
	{name: "absent", raw: "", want: render.Vars{}},
	{name: "null", raw: " null ", want: render.Vars{}},
	{name: "absent but required", raw: "", required: true, code: quire.EINVALID},
	{name: "null but required", raw: "null", required: true, code: quire.EINVALID},
	{name: "not an object", raw: "[1]", code: quire.EINVALID},
	{name: "a string", raw: `"x"`, code: quire.EINVALID},
	{name: "object", raw: `{"a":"b"}`, want: render.Vars{"a": "b"}},
	{name: "at the limit once compacted", raw: ` {"a": "` + strings.Repeat("x", 64<<10-8) + `"} `, want: render.Vars{"a": strings.Repeat("x", 64<<10-8)}},
	{name: "over the limit", raw: `{"a":"` + strings.Repeat("x", 64<<10) + `"}`, code: quire.ETOOLARGE},
}

func TestDecodeVariables(t *testing.T) {
	a := New(Config{})
	for _, tc := range decodeVariablesCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a.DecodeVariables(json.RawMessage(tc.raw), tc.required)
			if tc.code != "" {
				if quire.ErrorCode(err) != tc.code {
					t.Fatalf("err = %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v", got, err)
			}
		})
	}
}
