package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/quire/quire"
)

// memPayloads keeps payloads in memory.
type memPayloads struct {
	quire.PayloadStore
	m map[string]*quire.Payload
}

func (s *memPayloads) CreatePayload(_ context.Context, _ quire.Actor, a *quire.Asset, p *quire.Payload) error {
	p.ID, p.PromptID = payloadID, a.ID
	s.m[p.ID] = p
	return nil
}

func (s *memPayloads) Payload(_ context.Context, _ *quire.Asset, id string) (*quire.Payload, error) {
	if p := s.m[id]; p != nil {
		cp := *p
		return &cp, nil
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "payload not found")
}

func (s *memPayloads) UpdatePayload(_ context.Context, _ quire.Actor, _ *quire.Asset, p *quire.Payload) error {
	s.m[p.ID] = p
	return nil
}

var payloadCases = []struct {
	name  string
	in    PayloadInput
	vars  string // as stored, compacted
	pname string
	code  quire.Code
}{
	{name: "compacted", in: PayloadInput{Variables: json.RawMessage("{ \"a\" : 1,\n \"b\": [ 2 ] }")}, vars: `{"a":1,"b":[2]}`},
	{name: "named", in: PayloadInput{Variables: json.RawMessage(`{}`), Name: ptr("sample")}, vars: `{}`, pname: "sample"},
	{name: "variables required", in: PayloadInput{}, code: quire.EINVALID},
	{name: "variables null", in: PayloadInput{Variables: json.RawMessage(`null`)}, code: quire.EINVALID},
	{name: "variables not an object", in: PayloadInput{Variables: json.RawMessage(`[1]`)}, code: quire.EINVALID},
	{name: "variables over 64 KiB", in: PayloadInput{Variables: json.RawMessage(`{"a":"` + strings.Repeat("x", 64<<10) + `"}`)}, code: quire.ETOOLARGE},
	{name: "name too long", in: PayloadInput{Variables: json.RawMessage(`{}`), Name: ptr(strings.Repeat("n", 201))}, code: quire.EINVALID},
}

func TestCreatePayload(t *testing.T) {
	for _, tc := range payloadCases {
		t.Run(tc.name, func(t *testing.T) {
			store := &memPayloads{m: map[string]*quire.Payload{}}
			a := New(Config{Meta: fakeMeta{}, Payloads: store})
			pl, err := prompt(t, a, "p1").CreatePayload(context.Background(), tc.in)
			if tc.code != "" {
				if quire.ErrorCode(err) != tc.code || len(store.m) != 0 {
					t.Fatalf("err = %v, stored %d; want %s and nothing stored", err, len(store.m), tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(pl.Variables) != tc.vars || pl.Name != tc.pname || pl.CreatedBy != "u1" || store.m[pl.ID] != pl {
				t.Fatalf("payload %+v", pl)
			}
		})
	}
}

// TestUpdatePayload checks a replacement without a name keeps the name,
// and the payload it renders with after is the new one.
func TestUpdatePayload(t *testing.T) {
	store := &memPayloads{m: map[string]*quire.Payload{}}
	a := New(Config{Meta: fakeMeta{}, Payloads: store, Prompts: fakePrompts{}, Versions: fakeVersions{}})
	ctx := context.Background()
	if _, err := prompt(t, a, "p1").CreatePayload(ctx, PayloadInput{Variables: json.RawMessage(`{"name":"Old","topic":"t"}`), Name: ptr("keep")}); err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(t, a, "p1").Payload(ctx, "not-a-uuid"); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Fatalf("malformed id: %v", err)
	}
	if _, err := prompt(t, a, "p1").Payload(ctx, payloadID); err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(t, a, "p1").UpdatePayload(ctx, payloadID, PayloadInput{Variables: json.RawMessage(`{"name": "New", "topic": "t"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := store.m[payloadID]; got.Name != "keep" || string(got.Variables) != `{"name":"New","topic":"t"}` {
		t.Fatalf("stored %+v", got)
	}
	r, err := prompt(t, a, "p1").Render(ctx, RenderRequest{PayloadID: payloadID})
	if err != nil || *r.Text != "Hello New, about t." {
		t.Fatalf("render after update: %v, %v", r.Text, err)
	}
	if _, err := prompt(t, a, "p1").UpdatePayload(ctx, payloadID, PayloadInput{Variables: json.RawMessage(`"x"`)}); quire.ErrorCode(err) != quire.EINVALID {
		t.Fatalf("bad update: %v", err)
	}
	if err := prompt(t, a, "p1").DeletePayload(ctx, "nope"); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Fatalf("delete of a malformed id: %v", err)
	}
}
