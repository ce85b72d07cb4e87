package httpapi_test

import (
	"fmt"
)

// The review and label routes' rows of the authorization matrix
// (authz_test.go), for skills and prompts alike. Review 1 of each asset
// stays open for the cells that comment and give verdicts; cells that
// use up their target (open, close, reopen, delete a label) get a fresh
// one.
func init() {
	for _, k := range []struct{ plural, ref string }{{"skills", "{skill}"}, {"prompts", "{prompt}"}} {
		base := "/v1/" + k.plural + "/" + k.ref
		key := func(method, rest string) string { return method + " /v1/" + k.plural + "/:id" + rest }
		review := func(suffix string) func(*authzFixture, bool) authzReq {
			return func(f *authzFixture, fresh bool) authzReq {
				return authzReq{path: f.reviewPath(base, fresh, false) + suffix}
			}
		}
		rows := map[string]authzRow{
			key("POST", "/versions/:version/reviews"): {policy: "project-write", ok: 201, req: func(f *authzFixture, fresh bool) authzReq {
				n := 2
				if fresh {
					n = num(f.t, f.e.Must(201, "POST", f.expand(base+"/versions"), f.e.Admin, nil).JSON(f.t), "version", "version")
				}
				return authzReq{path: fmt.Sprintf("%s/versions/%d/reviews", f.expand(base), n), body: map[string]string{"title": "authz"}}
			}},
			key("GET", "/reviews"):         {policy: "project-read", ok: 200, req: authzPath(base + "/reviews")},
			key("GET", "/reviews/:number"): {policy: "project-read", ok: 200, req: review("")},
			key("POST", "/reviews/:number/comments"): {policy: "project-write", ok: 201, req: func(f *authzFixture, fresh bool) authzReq {
				return authzReq{path: f.reviewPath(base, false, false) + "/comments", body: map[string]string{"body": "authz"}}
			}},
			key("PATCH", "/reviews/:number/comments/:commentID"): {policy: "project-write", ok: 200, req: func(f *authzFixture, fresh bool) authzReq {
				p := f.reviewPath(base, false, false)
				id := str(f.t, f.e.Must(201, "POST", p+"/comments", f.e.Admin, map[string]string{"body": "to resolve"}).JSON(f.t), "comment", "id")
				return authzReq{path: p + "/comments/" + id, body: map[string]bool{"resolved": true}}
			}},
			key("POST", "/reviews/:number/approve"): {policy: "project-write", ok: 201, req: review("/approve")},
			key("POST", "/reviews/:number/request-changes"): {policy: "project-write", ok: 201, req: func(f *authzFixture, fresh bool) authzReq {
				return authzReq{path: f.reviewPath(base, false, false) + "/request-changes", body: map[string]string{"body": "authz"}}
			}},
			// The admin user opened the reviews: its keys act as their
			// author, so a write key may close and reopen them too.
			key("POST", "/reviews/:number/close"): {policy: "project-owner", ok: 200, over: map[cred]int{credWriteKey: 200}, req: review("/close")},
			key("POST", "/reviews/:number/reopen"): {policy: "project-owner", ok: 200, over: map[cred]int{credWriteKey: 200}, req: func(f *authzFixture, fresh bool) authzReq {
				return authzReq{path: f.reviewPath(base, fresh, true) + "/reopen"}
			}},
			key("GET", "/labels"): {policy: "project-read", ok: 200, req: authzPath(base + "/labels")},
			key("PUT", "/labels/:name"): {policy: "project-write", ok: 200,
				req: authzBody(base+"/labels/staging", map[string]int{"version": 1})},
			key("DELETE", "/labels/:name"): {policy: "project-write", ok: 204, req: func(f *authzFixture, fresh bool) authzReq {
				name := "staging"
				if fresh {
					name = f.unique("gone")
					f.e.Must(200, "PUT", f.expand(base+"/labels/"+name), f.e.Admin, map[string]int{"version": 1})
				}
				return authzReq{path: f.expand(base + "/labels/" + name)}
			}},
			key("GET", "/labels/:name/history"): {policy: "project-read", ok: 200, req: func(f *authzFixture, _ bool) authzReq {
				f.e.Must(200, "PUT", f.expand(base+"/labels/staging"), f.e.Admin, map[string]int{"version": 1})
				return authzReq{path: f.expand(base + "/labels/staging/history")}
			}},
		}
		for k, r := range rows {
			authzTable[k] = r
		}
	}
}

// reviewPath is the path of a review of the asset at base: review 1
// (opened by the admin on a draft of its own when missing), or a new one
// when fresh; closed first when closed is set.
func (f *authzFixture) reviewPath(base string, fresh, closed bool) string {
	b := f.expand(base)
	if !fresh && !closed && f.e.Do("GET", b+"/reviews/1", f.e.Admin, nil).Status == 200 {
		return b + "/reviews/1"
	}
	n := num(f.t, f.e.Must(201, "POST", b+"/versions", f.e.Admin, nil).JSON(f.t), "version", "version")
	r := num(f.t, f.e.Must(201, "POST", fmt.Sprintf("%s/versions/%d/reviews", b, n), f.e.Admin, map[string]string{"title": "authz"}).JSON(f.t), "review", "number")
	p := fmt.Sprintf("%s/reviews/%d", b, r)
	if closed {
		f.e.Must(200, "POST", p+"/close", f.e.Admin, nil)
	}
	return p
}
