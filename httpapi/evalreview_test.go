package httpapi_test

import (
	"strings"
	"testing"
	"time"
)

// reviewEval polls review num of greet until its evaluation is of commit
// and finished.
func (ev *evalEnv) reviewEval(num, commit string) map[string]any {
	ev.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := ev.Must(200, "GET", "/v1/prompts/greet/reviews/"+num, ev.Admin, nil).JSON(ev.t)
		if e, ok := r["evaluation"].(map[string]any); ok && e["commit"] == commit && e["state"] != "queued" && e["state"] != "running" {
			return e
		}
		if time.Now().After(deadline) {
			ev.t.Fatalf("review %s has no finished evaluation of %s: %v", num, commit, r["evaluation"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (ev *evalEnv) head(n string) string {
	return ev.Must(200, "GET", "/v1/prompts/greet/versions/"+n, ev.Admin, nil).JSON(ev.t)["version"].(map[string]any)["commit"].(string)
}

// TestEvaluationGate: with evaluate and require_passing_evaluation, a
// prompt review is evaluated when it opens and when its head moves; a
// failing assertion blocks the publish (409 evaluation_required) until a
// fix passes; an owner may override, recorded on the review; reviewers
// comment on a case.
func TestEvaluationGate(t *testing.T) {
	ev := newEvalEnv(t)
	edID, editor := ev.CreateUser("ed@example.com")
	ev.Must(200, "PATCH", "/v1/projects/evals", ev.Admin, obj{"review_policy": obj{"evaluate": true, "require_passing_evaluation": true}})
	pol := ev.Must(200, "GET", "/v1/projects/evals", ev.Admin, nil).JSON(t)["project"].(map[string]any)["review_policy"].(map[string]any)
	if pol["evaluate"] != true || pol["require_passing_evaluation"] != true {
		t.Fatalf("policy = %v", pol)
	}
	ev.Must(201, "POST", "/v1/prompts/greet/versions/2/reviews", ev.Admin, obj{"title": "Say hi"})
	e := ev.reviewEval("1", ev.head("2"))
	counts := e["counts"].(map[string]any)
	if e["state"] != "completed" || counts["failed"] != 1.0 || counts["changed"] != 2.0 || e["newly_failing"] != 1.0 ||
		e["summary"] != "2 of 2 outputs changed, 1 assertion newly failing, 1 case failing" || e["against"] != "base" {
		t.Errorf("review evaluation = %v", e)
	}
	r := ev.Must(409, "POST", "/v1/prompts/greet/versions/2/publish", ev.Admin, nil).JSON(t)
	d, _ := r["details"].(map[string]any)
	if r["code"] != "evaluation_required" || d["evaluation"] != e["id"] || d["failed"] != 1.0 || d["errored"] != 0.0 {
		t.Errorf("blocked publish = %v", r)
	}
	// A comment on the failing case.
	c := ev.Must(201, "POST", "/v1/prompts/greet/reviews/1/comments", ev.Admin, obj{"body": "Hello went missing", "case": ev.ann}).JSON(t)
	if c["comment"].(map[string]any)["case"] != ev.ann {
		t.Errorf("case comment = %v", c)
	}
	ev.Must(422, "POST", "/v1/prompts/greet/reviews/1/comments", ev.Admin, obj{"body": "x", "case": "00000000-0000-4000-8000-000000000000"})
	ev.Must(400, "POST", "/v1/prompts/greet/reviews/1/comments", ev.Admin, obj{"body": "x", "case": ev.ann, "path": "prompt.mustache"})

	// The fix moves the head: evaluated again, and the publish passes.
	ev.Must(200, "PATCH", "/v1/prompts/greet/versions/2", ev.Admin, obj{"template": "Hello {{name}}!"})
	e = ev.reviewEval("1", ev.head("2"))
	if e["state"] != "completed" || e["counts"].(map[string]any)["failed"] != 0.0 || e["summary"] != "2 of 2 outputs changed, 0 assertions newly failing" {
		t.Errorf("after the fix = %v", e)
	}
	ev.Must(200, "POST", "/v1/prompts/greet/versions/2/publish", ev.Admin, nil)

	// A regression, overridden by an owner with a reason; not by an editor.
	ev.Must(200, "PUT", "/v1/projects/evals/members/"+edID, ev.Admin, obj{"role": "editor"})
	ev.Must(201, "POST", "/v1/prompts/greet/versions", ev.Admin, obj{"template": "Yo {{name}}", "model": "gpt-test"})
	ev.Must(201, "POST", "/v1/prompts/greet/versions/3/reviews", ev.Admin, obj{"title": "Yo"})
	ev.reviewEval("2", ev.head("3"))
	ev.Must(409, "POST", "/v1/prompts/greet/versions/3/publish", editor, nil)
	ev.Must(403, "POST", "/v1/prompts/greet/versions/3/publish", editor, obj{"override": true, "reason": "ship it"})
	ev.Must(200, "POST", "/v1/prompts/greet/versions/3/publish", ev.Admin, obj{"override": true, "reason": "hotfix"})
	rv := ev.Must(200, "GET", "/v1/prompts/greet/reviews/2", ev.Admin, nil).JSON(t)["review"].(map[string]any)
	if o, _ := rv["override"].(map[string]any); o == nil || o["reason"] != "hotfix" || rv["state"] != "merged" {
		t.Errorf("overridden review = %v", rv)
	}
	// Without the policy, publishing needs no evaluation.
	ev.Must(200, "PATCH", "/v1/projects/evals", ev.Admin, obj{"review_policy": obj{}})
	ev.Must(201, "POST", "/v1/prompts/greet/versions", ev.Admin, obj{"template": "Hey {{name}}", "model": "gpt-test"})
	ev.Must(200, "POST", "/v1/prompts/greet/versions/4/publish", ev.Admin, nil)
	if strings.Contains(string(ev.Must(200, "GET", "/v1/prompts/greet/versions/4/evaluations", ev.Admin, nil).Body), `"id"`) {
		t.Errorf("a draft was evaluated without the policy")
	}
}
