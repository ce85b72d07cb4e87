package valid

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire"
)

// gitSpecialPaths are paths git treats specially on some filesystem, and
// whether quire accepts them. git fsck --strict fails on a tree holding a
// refused one and git clone cannot check it out (see
// gitstore.TestAcceptedPathsKeepGitHappy, which stores the accepted ones).
var gitSpecialPaths = []struct {
	path string
	ok   bool
}{
	{".git", false}, {".GIT", false}, {"a/.Git/b", false},
	{".git.", false}, {".git ", false}, {".git. . ", false}, {".git:stream", false},
	{"git~1", false}, {"GIT~1", false}, {"git~1.", false}, {"x/git~1/config", false},
	{".g\u200cit", false}, {"\ufeff.git", false}, {".gi\u200et", false}, {".GI\u206bT", false},
	{".gitmodules", false}, {".GitModules", false}, {"a/.gitmodules", false}, {".gitmodules.", false},
	{"gitmod~1", false}, {"GITMOD~4", false}, {"gi7eba~1", false}, {"gi7eb~12", false}, {".gitmodules/x", false},
	{".gitattributes/x", false}, {"gi7d29~1/x", false},

	{".github/workflows/ci.yml", true}, {".gitignore", true}, {".gitattributes", true}, {"a/.gitattributes", true},
	{".gitkeep", true}, {".git-blame-ignore-revs", true}, {".gitx", true}, {"a.git", true}, {"git", true},
	{"git~2", true}, {"gitmod~5", true}, {"gitmod~0", true}, {".gitmodules2", true}, {"gi7eba~a", true}, {"gi7eba~12", true},
	{"_git", true}, {"git~1x", true}, {".g\u00efit", true}, {"\u00e9t\u00e9.md", true},
}

func TestFilePathGitSpecialNames(t *testing.T) {
	for _, tc := range gitSpecialPaths {
		err := FilePath(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("FilePath(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
		if err != nil && quire.ErrorCode(err) != quire.EINVALID {
			t.Errorf("FilePath(%q): code %s", tc.path, quire.ErrorCode(err))
		}
	}
}

func TestFileContentGitattributes(t *testing.T) {
	long := strings.Repeat("a", MaxAttributesLine)
	for _, tc := range []struct {
		path, content string
		ok            bool
	}{
		{".gitattributes", "*.md text\n" + long + "\n", true},
		{".gitattributes", "*.md text\n" + long + "a\n", false},
		{"x/.GITATTRIBUTES", long + "a", false},
		{".gitattributes.", long + "a", false},
		{"gi7d29~1", long + "a", false},
		{"notes.txt", long + "a", true},
		{".gitattributes", "", true},
	} {
		if err := FileContent(tc.path, []byte(tc.content)); (err == nil) != tc.ok {
			t.Errorf("FileContent(%q, %d bytes) = %v, want ok=%v", tc.path, len(tc.content), err, tc.ok)
		}
	}
}

// TestGitAgreesWithFilePath writes, with the git binary, a tree for each
// path of gitSpecialPaths and checks that quire accepts exactly the paths
// git is happy with: git fsck --strict finds nothing wrong with its trees,
// and git's verify_path (what clone's checkout applies) lets it into an
// index. A .gitmodules gets a submodule URL git refuses: quire keeps no
// submodules, so it refuses the name rather than parse the content.
func TestGitAgreesWithFilePath(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(stdin string, env []string, args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := git("", nil, "init", "-q"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	objects := make([][]string, len(gitSpecialPaths)) // blob and trees of each path
	indexOK := make([]bool, len(gitSpecialPaths))
	for i, tc := range gitSpecialPaths {
		content := fmt.Sprintf("x %d\n", i)
		base := strings.ToLower(tc.path[strings.LastIndexByte(tc.path, '/')+1:])
		switch {
		case strings.Contains(base, "attributes"):
			content = fmt.Sprintf("*.md text\n# %d\n", i)
		case strings.Contains(base, "modules") || strings.HasPrefix(base, "gitmod~") || strings.HasPrefix(base, "gi7eb"):
			content = fmt.Sprintf("[submodule \"x\"]\n\tpath = x\n\turl = -evil%d\n", i)
		}
		obj, err := git(content, nil, "hash-object", "-w", "--stdin")
		if err != nil {
			t.Fatalf("%v %s", err, obj)
		}
		objects[i] = append(objects[i], obj)
		_, err = git("", []string{"GIT_INDEX_FILE=" + filepath.Join(dir, fmt.Sprintf("index%d", i))},
			"update-index", "--add", "--cacheinfo", "100644,"+obj+","+tc.path)
		indexOK[i] = err == nil
		mode, typ := "100644", "blob"
		comps := strings.Split(tc.path, "/")
		for j := len(comps) - 1; j >= 0; j-- {
			if obj, err = git(fmt.Sprintf("%s %s %s\t%s\n", mode, typ, obj, comps[j]), nil, "mktree"); err != nil {
				t.Fatalf("mktree %q: %v %s", tc.path, err, obj)
			}
			objects[i] = append(objects[i], obj)
			mode, typ = "040000", "tree"
		}
	}
	// fsck checks every object, reachable or not, and names the bad ones.
	fsck, _ := git("", nil, "fsck", "--strict", "--no-dangling")
	bad := map[string]string{}
	for _, line := range strings.Split(fsck, "\n") {
		if f := strings.Fields(line); len(f) >= 4 && f[0] == "error" && f[1] == "in" {
			bad[strings.TrimSuffix(f[3], ":")] = line
		}
	}
	for i, tc := range gitSpecialPaths {
		var complaints []string
		for _, o := range objects[i] {
			if c, ok := bad[o]; ok {
				complaints = append(complaints, c)
			}
		}
		gitOK := indexOK[i] && len(complaints) == 0
		if quireOK := FilePath(tc.path) == nil; quireOK != gitOK || quireOK != tc.ok {
			t.Errorf("%q: quire accepts=%v, table says %v; git: verify_path ok=%v, fsck %v", tc.path, quireOK, tc.ok, indexOK[i], complaints)
		}
	}
}
