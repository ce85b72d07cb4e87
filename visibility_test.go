package quire_test

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"testing"

	"github.com/quire/quire"
)

// A project's visibility survives JSON (the API, the metadata files) and
// gob (the metadata snapshot); one stored before the field reads as
// private.
func TestVisibilityRoundTrip(t *testing.T) {
	for _, v := range []quire.Visibility{"", quire.Private, quire.Public} {
		in := quire.Project{ID: "p", Visibility: v}
		want := v
		if want == "" {
			want = quire.Private
		}
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(&in); err != nil {
			t.Fatal(err)
		}
		var g quire.Project
		if err := gob.NewDecoder(&buf).Decode(&g); err != nil {
			t.Fatalf("gob: %v", err)
		}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var j quire.Project
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		norm := func(v quire.Visibility) quire.Visibility {
			if v == "" {
				return quire.Private
			}
			return v
		}
		if norm(g.Visibility) != want || j.Visibility != want || g.Public() != (v == quire.Public) {
			t.Errorf("%q: gob %q, json %q (%s)", v, g.Visibility, j.Visibility, b)
		}
	}
	var old quire.Project
	if err := json.Unmarshal([]byte(`{"id":"p"}`), &old); err != nil || old.Public() {
		t.Fatalf("a project stored before visibility: %v %+v", err, old)
	}
}
