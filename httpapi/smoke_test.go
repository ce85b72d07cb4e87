package httpapi_test

import (
	"testing"

	"github.com/quire/quire/internal/testenv"
)

func TestSkillFlowSmoke(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	pid := e.CreateProject(e.Admin, "demo")
	e.CreateSkill(e.Admin, pid, "pdf")
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil)
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/files", e.Admin, map[string]string{"file_path": "SKILL.md", "content": testenv.SkillManifest("pdf")})
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/publish", e.Admin, nil)
	testenv.Git(t, e.RepoPath("skill", e.Must(200, "GET", "/v1/skills/pdf", e.Admin, nil).JSON(t)["skill"].(map[string]any)["id"].(string)), "fsck", "--strict")
}
