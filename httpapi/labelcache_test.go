package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// labelRender renders prompt id by label and returns the status and the
// version rendered (0 unless 200), checking the ETag is that version's.
func labelRender(e *testenv.Env, id, token, label string, commits map[int]string) (int, int) {
	e.T.Helper()
	r := e.Do("POST", "/v1/prompts/"+id+"/render", token, obj{"label": label, "variables": obj{"x": "1"}})
	if r.Status != 200 {
		return r.Status, 0
	}
	m := r.JSON(e.T)
	v := int(m["version"].(float64))
	if et := r.Header.Get("ETag"); et != `"`+commits[v]+`"` || m["rendered"] != fmt.Sprintf("v%d 1", v) {
		e.T.Fatalf("label %s rendered v%d: ETag %s, body %s", label, v, et, r.Body)
	}
	return 200, v
}

// TestTwoProcessesLabels runs two quire servers on one data root and one
// real Redis: renders by label come from the cache (in process, and from
// Redis to the other server), and a label moved or deleted on either
// server is seen by the other's very next render, as a publish is.
func TestTwoProcessesLabels(t *testing.T) {
	a, b := twoServers(t)
	id := newPrompt(a, "labels")
	key := a.CreateKey(a.Admin, "write")
	commits := map[int]string{}
	for n := 1; n <= 4; n++ {
		_, commits[n] = publishTemplate(a, id, fmt.Sprintf("v%d {{x}}", n))
	}
	a.Must(200, "PUT", "/v1/prompts/"+id+"/labels/staging", key, obj{"version": 1})
	for i := range 3 { // warm both in-process tiers
		labelRender(a, id, key, "staging", commits)
		if _, v := labelRender(b, id, key, "staging", commits); v != 1 {
			t.Fatalf("round %d: b rendered v%d", i, v)
		}
	}
	if st := b.Prompts.Stats(); st.LabelHits == 0 || st.RedisHits == 0 || st.LabelLoads != 0 {
		t.Fatalf("b did not use the label tier and Redis: %+v", st)
	}
	loads := a.Prompts.Stats().LabelLoads + b.Prompts.Stats().LabelLoads

	for n := 2; n <= 4; n++ {
		on, other := a, b
		if n%2 == 1 {
			on, other = b, a
		}
		on.Must(200, "PUT", "/v1/prompts/"+id+"/labels/staging", key, obj{"version": n})
		if _, v := labelRender(other, id, key, "staging", commits); v != n {
			t.Fatalf("move to v%d: the other server rendered v%d", n, v)
		}
		if _, v := labelRender(on, id, key, "staging", commits); v != n {
			t.Fatalf("move to v%d: the same server rendered v%d", n, v)
		}
		// Live is its own tier: still the last published.
		if v := liveRender(other, "/v1/prompts/"+id+"/render", key); v != 4 {
			t.Fatalf("live rendered v%d", v)
		}
	}
	if got := a.Prompts.Stats().LabelLoads + b.Prompts.Stats().LabelLoads; got <= loads {
		t.Fatalf("moves caused no reload: %d loads", got)
	}
	a.Must(204, "DELETE", "/v1/prompts/"+id+"/labels/staging", key, nil)
	if st, _ := labelRender(b, id, key, "staging", commits); st != 404 {
		t.Fatalf("deleted label on b: %d", st)
	}
	b.Must(200, "PUT", "/v1/prompts/"+id+"/labels/staging", key, obj{"version": 2})
	if _, v := labelRender(a, id, key, "staging", commits); v != 2 {
		t.Fatalf("label set again on b: a rendered v%d", v)
	}
}
