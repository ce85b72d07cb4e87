package gitproto

import (
	"strings"
	"testing"
)

func TestParseFilter(t *testing.T) {
	for _, tc := range []struct {
		spec string
		kind filterKind
		n    uint64
		err  string
	}{
		{spec: "blob:none", kind: filterBlobNone},
		{spec: "blob:limit=0", kind: filterBlobLimit},
		{spec: "blob:limit=100", kind: filterBlobLimit, n: 100},
		{spec: "blob:limit=10k", kind: filterBlobLimit, n: 10 << 10},
		{spec: "blob:limit=2M", kind: filterBlobLimit, n: 2 << 20},
		{spec: "blob:limit=1g", kind: filterBlobLimit, n: 1 << 30},
		{spec: "tree:0", kind: filterTreeDepth},
		{spec: "tree:3", kind: filterTreeDepth, n: 3},
		{spec: "blob:limit=", err: "expected 'blob:limit=<n>'"},
		{spec: "blob:limit=-1", err: "expected 'blob:limit=<n>'"},
		{spec: "blob:limit=1t", err: "expected 'blob:limit=<n>'"},
		{spec: "blob:limit=99999999999999999999", err: "expected 'blob:limit=<n>'"},
		{spec: "blob:limit=17179869184g", err: "expected 'blob:limit=<n>'"},
		{spec: "tree:", err: "expected 'tree:<depth>'"},
		{spec: "tree:x", err: "expected 'tree:<depth>'"},
		{spec: "sparse:oid=main:f", err: "is not supported"},
		{spec: "object:type=blob", err: "is not supported"},
		{spec: "combine:blob:none+tree:0", err: "is not supported"},
		{spec: "", err: "is not supported"},
	} {
		f, err := parseFilter(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || f.kind != tc.kind || f.n != tc.n || f.spec != tc.spec {
			t.Errorf("%q: %+v, %v; want kind %d n %d", tc.spec, f, err, tc.kind, tc.n)
		}
	}
}
