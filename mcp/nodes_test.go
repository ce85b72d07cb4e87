package mcp_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire/internal/testenv"
)

// TestNotificationsAcrossServers: two servers on one data root and one
// Redis, as two nodes. A session on one hears of a publish made on the
// other: prompts/list_changed, and resources/updated for a subscribed
// skill file.
func TestNotificationsAcrossServers(t *testing.T) {
	redis := miniredis.RunT(t)
	opts := testenv.Options{Root: t.TempDir(), RedisURL: "redis://" + redis.Addr(), Prefix: "quiretest:nodes:"}
	a := testenv.NewWith(t, opts)
	z := testenv.NewWith(t, opts)
	f := fixtureOn(t, a)

	prompts := make(chan struct{}, 16)
	updated := make(chan string, 16)
	cs := connect(t, z, z.Admin, "2025-11-25", &sdk.ClientOptions{
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) { prompts <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
	})
	ctx := context.Background()
	const uri = "skill://demo/pdf-tools/SKILL.md"
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "skill://demo/nope/SKILL.md"}); err == nil {
		t.Fatal("subscribed to a skill that does not exist")
	}

	f.publishPrompt(t, "elsewhere", map[string]any{"template": "made on a"})
	select {
	case <-prompts:
	case <-time.After(30 * time.Second):
		t.Fatal("no prompts/list_changed on z within 30s of a publish on a")
	}
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(list.Prompts) != 3 {
		t.Fatalf("z lists %v %s", err, dump(list))
	}

	a.Must(201, "POST", "/v1/skills/"+f.skill+"/versions", a.Admin, nil)
	a.Must(200, "POST", "/v1/skills/"+f.skill+"/versions/2/files", a.Admin, map[string]string{"file_path": "SKILL.md", "content": testenv.SkillManifest("pdf-tools") + "More.\n"})
	a.Must(200, "POST", "/v1/skills/"+f.skill+"/versions/2/publish", a.Admin, nil)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case got := <-updated:
			if got != uri {
				t.Fatalf("resources/updated for %s, want %s", got, uri)
			}
			read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			if read.Contents[0].Text == testenv.SkillManifest("pdf-tools")+"More.\n" {
				return // the update reached z, and z reads the new live version
			}
		case <-deadline:
			t.Fatal("z never read the new SKILL.md after resources/updated")
		}
	}
}
