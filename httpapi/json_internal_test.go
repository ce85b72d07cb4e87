package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// scanKeysCases are bodies that decoded, with the error checkJSON must
// give ("" for none).
var scanKeysCases = []struct{ body, want string }{
	{`{"":{},"":0}`, `key "" appears twice`}, // found by fuzzing
	{`{"variables":{"name":"Ann","topic":"caching"}}`, ""},
	{`{"a":1,"a":2}`, `key "a" appears twice`},
	{`{"Scope":"read","scope":"admin"}`, `key "scope" appears twice`},
	{`{"v":{"A":1,"a":2}}`, ""}, // below the top level, case matters
	{`{"v":{"a":1,"a":2}}`, `key "a" appears twice`},
	{`{"v":[{"a":1},{"a":2}]}`, ""},
	{`{"a":{"b":1},"b":2}`, ""},
	{`{"a":{"b":1},"c":{"b":2}}`, ""},
	{`{"a":"x:y","b":"\"a\":","a":3}`, `key "a" appears twice`},
	{` { "k" : 1 , "k" : 2 } `, `key "k" appears twice`},
	{`{"café":1,"CAFÉ":2}`, `key "CAFÉ" appears twice`},
	{"{\"\u017fcope\":\"read\",\"scope\":\"x\"}", `key "scope" appears twice`},
	{`{"a\u0062":1,"ab":2}`, `key "ab" appears twice`}, // escaped key: the token walk decides
	{`{"x":"\\","x":1}`, `key "x" appears twice`},      // an escaped backslash ends no string
	{`["a","a",{"a":1}]`, ""},
	{`"a"`, ""},
	{`{}`, ""},
}

func TestCheckJSONDuplicateKeys(t *testing.T) {
	for _, tc := range scanKeysCases {
		err := checkJSON([]byte(tc.body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tc.body, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %s", tc.body, err, tc.want)
		}
	}
	// Past 64 keys in one object the token walk takes over, with the same answer.
	var many []string
	for i := range 100 {
		many = append(many, fmt.Sprintf(`"k%d":1`, i))
	}
	if err := checkJSON([]byte("{" + strings.Join(many, ",") + "}")); err != nil {
		t.Errorf("100 distinct keys: %v", err)
	}
	if err := checkJSON([]byte("{" + strings.Join(many, ",") + `,"k7":2}`)); err == nil {
		t.Error("a duplicate after 100 keys went through")
	}
}

// TestCheckJSONAllocs: a render body is checked without allocating.
func TestCheckJSONAllocs(t *testing.T) {
	b := []byte(`{"variables":{"name":"Ann","topic":"caching"},"version":1}`)
	if n := testing.AllocsPerRun(100, func() { checkJSON(b) }); n != 0 {
		t.Fatalf("checkJSON allocates %v times for a render body", n)
	}
}

// FuzzScanKeys checks the fast duplicate key search against the token
// walk on any valid JSON.
//
//	go test ./httpapi -run xxx -fuzz FuzzScanKeys -fuzztime 30s
func FuzzScanKeys(f *testing.F) {
	for _, tc := range scanKeysCases {
		f.Add(tc.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		b := []byte(body)
		if !json.Valid(b) {
			return
		}
		dup, found, ok := scanKeys(b)
		if !ok {
			return
		}
		walked := walkKeys(b)
		if found != (walked != nil) || walked != nil && !strings.Contains(walked.Error(), fmt.Sprintf("key %q appears twice", dup)) {
			t.Fatalf("%s: scan found %q, token walk %v", body, dup, walked)
		}
	})
}

// FuzzRenderBodyOnePass: the one-pass decoding of a render body
// (fastRender) accepts only what the long way (renderRequest, then the
// variables on their own) accepts, and reads the same request from it.
func FuzzRenderBodyOnePass(f *testing.F) {
	for _, body := range []string{
		`{"variables":{"name":"Ann","topic":"caching"}}`,
		`{"variables":{"n":1e400,"f":1.50,"neg":-0,"null":null,"t":true,"list":[1,{"a":null}],"obj":{"x":{"y":"z"}}}}`,
		`{"variables":null,"version":3,"payload_id":"p"}`,
		`{"Variables":{"a":"b"},"VERSION":2}`,
		`{"variables":{}}`, `{}`, `{"variables":[]}`, `{"variables":"x"}`, `{"variables":1}`,
		`{"variables":{"a":1},"variables":{"a":2}}`, `{"variables":{"a":1,"a":2}}`,
		`{"variables":{"\u00e9":"\ud83d\ude00"}}`, `{"variables":{"s":"\ud800"}}`,
		`{"version":"1"}`, `{"version":1.5}`, `{"version":-2}`, `{"version":null,"payload_id":null}`, `{"version":1e2}`, `{"version":99999999999999999999}`, `{"payload_id":7}`, `[]`, `null`, `{"variables":{"a":1}} x`,
	} {
		f.Add(body)
	}
	a := app.New(app.Config{Limits: quire.DefaultLimits()})
	s := New(app.New(app.Config{Limits: quire.DefaultLimits()}), Config{Limits: quire.DefaultLimits()})
	f.Fuzz(func(t *testing.T, body string) {
		b := []byte(body)
		fast, ok := s.fastRender(b)
		if !ok {
			return // the long way then says what is wrong
		}
		var slow renderRequest
		if err := decodeJSON(b, &slow, false); err != nil {
			t.Fatalf("%s: one pass accepts, the long way refuses: %v", body, err)
		}
		vars, err := a.DecodeVariables(slow.Variables, false)
		if err != nil {
			t.Fatalf("%s: one pass accepts, the variables refuse: %v", body, err)
		}
		if got := fast.Vars; !reflect.DeepEqual(got, vars) {
			t.Fatalf("%s: one pass reads variables %#v, the long way %#v", body, got, vars)
		}
		if fast.PayloadID != slow.PayloadID || fast.Label != slow.Label || (fast.Version == nil) != (slow.Version == nil) || fast.Version != nil && *fast.Version != *slow.Version {
			t.Fatalf("%s: one pass reads version %v payload %q, the long way %v %q", body, fast.Version, fast.PayloadID, slow.Version, slow.PayloadID)
		}
	})
}

// TestFastRenderTakes: the bodies applications send go the one-pass way;
// the others the long way, which says what is wrong with them.
func TestFastRenderTakes(t *testing.T) {
	s := New(app.New(app.Config{Limits: quire.DefaultLimits()}), Config{Limits: quire.DefaultLimits()})
	for _, tc := range []struct {
		body string
		fast bool
	}{
		{`{"variables":{"name":"Ann","topic":"caching"}}`, true},
		{`{"variables":{"n":1.50,"list":[1,{"a":null}],"t":true}, "version":3, "label":null}`, true},
		{` {"payload_id":"p","label":"staging"} `, true},
		{`{}`, true},
		{`{"Variables":{"a":"b"}}`, false},
		{`{"variables":{"a":1},"variables":{"a":2}}`, false},
		{`{"variables":{"a":1,"a":2}}`, false},
		{`{"variables":{"s":"\ud800"}}`, false},
		{`{"variables":[]}`, false},
		{`{"version":"1"}`, false},
		{`{"version":1.5}`, false},
		{`{"other":null}`, false},
		{`{"variables":{}} {}`, false},
		{`{"variables":{}`, false},
		{`null`, false},
	} {
		if _, ok := s.fastRender([]byte(tc.body)); ok != tc.fast {
			t.Errorf("%s: one pass %v, want %v", tc.body, ok, tc.fast)
		}
	}
}

// BenchmarkReadRenderBody is the decoding of the hot path's render body:
// the one pass, and encoding/json into any as it was before (issue 14).
func BenchmarkReadRenderBody(b *testing.B) {
	body := []byte(`{"variables":{"name":"Ann","topic":"caching"}}`)
	s := New(app.New(app.Config{Limits: quire.DefaultLimits()}), Config{Limits: quire.DefaultLimits()})
	b.Run("jsontext", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := s.fastRender(body); !ok {
				b.Fatal("long way")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := decodeJSON(body, &v, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}
