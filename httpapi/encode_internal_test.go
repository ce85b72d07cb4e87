package httpapi

import (
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

func strp(s string) *string { return &s }

// TestWriteRenderAsJSON: a render answer from the memo's frame is byte
// for byte what encoding/json writes for it, whatever its text holds and
// however often a frame is reused.
func TestWriteRenderAsJSON(t *testing.T) {
	parts := []app.PartialUse{{Slug: "safety", PromptID: "p2", Version: 3, Commit: "c2"}, {Slug: "style@1", PromptID: "p3", Version: 1, Commit: "c3"}}
	cases := []renderResponse{
		{PromptID: "p1", Version: 1, Commit: "c1", Rendered: strp("Hello <b>&</b> \"x\"\n\t\u2028\u2029 \x01 é"), Model: "m", ModelParams: json.RawMessage(`{ "t" : 1 }`), Partials: []app.PartialUse{}},
		{PromptID: "p1", Version: 1, Commit: "c1", Rendered: strp("bad utf-8 \xff\xfe"), Model: "m", ModelParams: json.RawMessage(`{ "t" : 1 }`), Partials: []app.PartialUse{}},
		{PromptID: "p1", Version: 1, Commit: "c1", Rendered: strp(""), Model: "m", ModelParams: json.RawMessage(`{ "t" : 1 }`), Partials: []app.PartialUse{}},
		{PromptID: "p1", Version: 2, Commit: "c9", Rendered: strp("with partials"), Model: `a "model", "model": <x>`, ModelParams: json.RawMessage(`{"model":"x"}`), Partials: parts},
		{PromptID: "p1", Version: 4, Commit: "c4", Messages: []quire.Message{{Role: "system", Content: "<sys>"}, {Role: "user", Content: "hi \u2028"}}, ModelParams: json.RawMessage(`{}`), Partials: parts},
		{PromptID: "p1", Version: 5, Commit: "c5", ModelParams: json.RawMessage(`{}`), Partials: []app.PartialUse{}},
	}
	s := &Server{}
	for round := range 2 {
		for i, r := range cases {
			want, err := json.Marshal(&r)
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(w)
			s.writeRender(c, &r, r.Commit)
			if got := w.Body.String(); got != string(want) {
				t.Fatalf("round %d, case %d:\n got %s\nwant %s", round, i, got, want)
			}
			if ct := w.Header().Get("Content-Type"); ct != jsonMediaType {
				t.Fatalf("Content-Type %q", ct)
			}
			if et := w.Header().Get("ETag"); et != `"`+r.Commit+`"` {
				t.Fatalf("ETag %q", et)
			}
		}
	}
}

// TestAppendJSONString: an ASCII string is quoted byte for byte as
// json.Marshal quotes it, every byte alone and in random strings; any
// other is left to json.Marshal.
func TestAppendJSONString(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want, _ := json.Marshal(s)
		got, ok := jsonQuoting.append([]byte("x"), s)
		if !ok || string(got) != "x"+string(want) {
			t.Fatalf("%q: got %s (%v), want %s", s, got, ok, want)
		}
	}
	for b := range 0x80 {
		check(string(rune(b)))
		check("a" + string(rune(b)) + "z")
	}
	check("")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(0x80))
		}
		check(string(b))
	}
	for _, s := range []string{"é", "a\u2028", "\u2028", "\xff", "ok \u00e9"} {
		s, _ = strconv.Unquote(`"` + s + `"`)
		if _, ok := jsonQuoting.append(nil, s); ok {
			t.Fatalf("%q: quoted, want it left to json.Marshal", s)
		}
	}
}

// TestWriteLiveAsJSON: a live answer is encoding/json's, and a new
// version value under the same commit is encoded afresh.
func TestWriteLiveAsJSON(t *testing.T) {
	s := &Server{}
	a := &quire.Asset{ID: "p1"}
	tmpl := "Hi <{{name}}>"
	for _, model := range []string{"m1", "m2"} {
		pv := &quire.PromptVersion{Version: &quire.Version{Number: 1, Commit: "c1", State: quire.StatePublished, Live: true},
			Content: &quire.PromptContent{Template: &tmpl, Model: model, ModelParams: json.RawMessage(`{ "t": 1 }`)}}
		files := []app.LiveFile{{Path: "prompt.json", Size: 2, SHA256: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"}}
		want, _ := json.Marshal(gin.H{"version": newPromptView(a, pv.Version, pv.Content), "files": files})
		for range 2 {
			w := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(w)
			s.writeLive(c, a, pv, func() ([]app.LiveFile, error) { return files, nil })
			if w.Body.String() != string(want) {
				t.Fatalf("got %s\nwant %s", w.Body, want)
			}
		}
	}
}
