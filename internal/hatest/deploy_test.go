package hatest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestComposeFile: deploy/compose.yaml runs three quire nodes on one
// volume, reaching Redis through three Sentinels, behind a balancer that
// checks /readyz. With Docker's compose plugin present, `docker compose
// config` must accept the file too.
func TestComposeFile(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "compose.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]struct {
			Image       string
			Environment map[string]string
			Volumes     []string
			Command     []string
			Ports       []string
		}
		Volumes map[string]any
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	quires, sentinels := 0, 0
	for name, s := range f.Services {
		switch {
		case strings.HasPrefix(name, "quire-"):
			quires++
			if !contains(s.Volumes, "quire-data:/data") || s.Environment["QUIRE_DATA"] != "/data" {
				t.Errorf("%s does not use the shared data root: %v %v", name, s.Volumes, s.Environment["QUIRE_DATA"])
			}
			if s.Environment["QUIRE_REDIS_SENTINEL_MASTER"] != "quire" || len(strings.Split(s.Environment["QUIRE_REDIS_SENTINEL_ADDRS"], ",")) != 3 {
				t.Errorf("%s does not reach Redis through the three Sentinels: %v", name, s.Environment)
			}
		case strings.HasPrefix(name, "sentinel-"):
			sentinels++
		}
	}
	for name, s := range f.Services {
		if strings.HasPrefix(name, "quire-") && s.Environment["QUIRE_REDIS_PASSWORD"] != "${REDIS_PASSWORD:?set REDIS_PASSWORD}" {
			t.Errorf("%s does not authenticate to Redis: %v", name, s.Environment)
		}
		if strings.HasPrefix(name, "redis-") && !contains(s.Command, "--requirepass") {
			t.Errorf("%s asks no password: %v", name, s.Command)
		}
	}
	if p := f.Services["caddy"].Ports; len(p) != 1 || !strings.HasPrefix(p[0], "${QUIRE_BIND:-127.0.0.1}:") {
		t.Errorf("Caddy is published on %v, want loopback unless QUIRE_BIND says otherwise", p)
	}
	if !bytes.Contains(raw, []byte("sentinel auth-pass quire $$REDIS_PASSWORD")) {
		t.Error("the Sentinels do not authenticate to the Redis they watch")
	}
	if quires != 3 || sentinels != 3 || f.Services["redis-replica"].Image == "" || f.Services["caddy"].Image == "" {
		t.Errorf("want 3 quire nodes, 3 Sentinels, a replica and Caddy; have %d, %d, %v", quires, sentinels, f.Services)
	}
	caddy, err := os.ReadFile(filepath.Join("..", "..", "deploy", "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"quire-1:8080 quire-2:8080 quire-3:8080", "health_uri /readyz"} {
		if !bytes.Contains(caddy, []byte(want)) {
			t.Errorf("Caddyfile lacks %q", want)
		}
	}
	if err := exec.Command("docker", "compose", "version").Run(); err != nil {
		t.Log("docker compose not available: the file was checked by structure only")
		return
	}
	cmd := exec.Command("docker", "compose", "-f", path, "config", "-q")
	cmd.Env = append(os.Environ(), "QUIRE_ADMIN_PASSWORD=x", "REDIS_PASSWORD=y")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("docker compose config: %v\n%s", err, out)
	}
}

// TestKubernetesManifests: three replicas on a ReadWriteMany claim, ready
// by /readyz, with a disruption budget that keeps two up.
func TestKubernetesManifests(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "k8s", "quire.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]map[string]any{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("quire.yaml: %v", err)
		}
		if doc["kind"] == "Secret" {
			t.Errorf("quire.yaml commits a Secret (%v): the operator creates it", get0(doc, "metadata", "name"))
		}
		if doc["kind"] == "Service" && get0(doc, "metadata", "name") == "quire-metrics" {
			kinds["MetricsService"] = doc
			continue
		}
		kinds[doc["kind"].(string)] = doc
	}
	if bytes.Contains(raw, []byte("change-me")) {
		t.Error("quire.yaml holds a default password")
	}
	if !bytes.Contains(raw, []byte("kubectl create secret generic quire-admin")) {
		t.Error("quire.yaml does not say how to create the Secret it references")
	}
	get := func(doc map[string]any, keys ...any) any {
		var v any = doc
		for _, k := range keys {
			switch x := v.(type) {
			case map[string]any:
				v = x[k.(string)]
			case []any:
				v = x[k.(int)]
			default:
				t.Fatalf("no %v in %v", keys, doc["kind"])
			}
		}
		return v
	}
	dep := kinds["Deployment"]
	if dep == nil || kinds["PersistentVolumeClaim"] == nil || kinds["PodDisruptionBudget"] == nil || kinds["Service"] == nil {
		t.Fatalf("want a Deployment, a PVC, a Service and a PDB; have %v", kinds)
	}
	if get(dep, "spec", "replicas") != 3 {
		t.Errorf("replicas %v", get(dep, "spec", "replicas"))
	}
	c := []any{"spec", "template", "spec", "containers", 0}
	if p := get(dep, append(c, "readinessProbe", "httpGet", "path")...); p != "/readyz" {
		t.Errorf("readiness probe path %v", p)
	}
	if m := get(kinds["PersistentVolumeClaim"], "spec", "accessModes", 0); m != "ReadWriteMany" {
		t.Errorf("claim access mode %v", m)
	}
	if n := get(dep, "spec", "template", "spec", "volumes", 0, "persistentVolumeClaim", "claimName"); n != get(kinds["PersistentVolumeClaim"], "metadata", "name") {
		t.Errorf("the Deployment mounts claim %v", n)
	}
	if ms := kinds["MetricsService"]; ms == nil || get(ms, "spec", "ports", 0, "targetPort") != "metrics" ||
		get(dep, append(c, "ports", 1, "name")...) != "metrics" {
		t.Errorf("no Service reaches the pods' metrics port: %v", ms)
	}
	if get(kinds["PodDisruptionBudget"], "spec", "minAvailable") != 2 {
		t.Errorf("PDB minAvailable %v", get(kinds["PodDisruptionBudget"], "spec", "minAvailable"))
	}
	if _, err := exec.LookPath("kubeconform"); err == nil {
		if out, err := exec.Command("kubeconform", "-strict", "-summary", path).CombinedOutput(); err != nil {
			t.Errorf("kubeconform: %v\n%s", err, out)
		}
	}
}

// get0 reads a nested map value, nil when absent.
func get0(doc map[string]any, keys ...string) any {
	var v any = doc
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// TestDockerignore: the image's build context leaves out the git
// history, the default data root (password hashes, the webhook key) and
// build leftovers.
func TestDockerignore(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	for _, want := range []string{".git", "repos/", "/quire", "*.test", "node_modules/"} {
		if !contains(lines, want) {
			t.Errorf(".dockerignore lacks %s", want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
