package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRaceSkipsRunElsewhere keeps make test's split true: a test that
// skips itself under the race detector (it reads raceDetector, directly
// or through a helper such as sequentialHeavy) runs only in the Makefile's
// run without -race, so that run's -run pattern must name it and its
// package must be on that line. A test added to the split but not to the
// Makefile would otherwise never run at all, and one the pattern matches
// by mistake would run twice.
func TestRaceSkipsRunElsewhere(t *testing.T) {
	dir := root(t)
	mk, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for l := range strings.Lines(string(mk)) {
		if strings.Contains(l, "go test") && !strings.Contains(l, "-race") && strings.Contains(l, "-run '") && strings.Contains(l, "./httpapi") {
			line = l
		}
	}
	m := regexp.MustCompile(`-run '([^']+)'`).FindStringSubmatch(line)
	if m == nil {
		t.Fatal("Makefile: no run without -race with a -run pattern over ./httpapi")
	}
	run := regexp.MustCompile(m[1])

	fset := token.NewFileSet()
	skipping := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		// Functions of the file that read raceDetector, then the tests
		// that read it or call one of them.
		helpers := map[string]bool{}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil && uses(fn.Body, func(id string) bool { return id == "raceDetector" }) {
				helpers[fn.Name.Name] = true
			}
		}
		pkg := "./" + filepath.ToSlash(filepath.Dir(must(filepath.Rel(dir, path))))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !(strings.HasPrefix(fn.Name.Name, "Test") || strings.HasPrefix(fn.Name.Name, "Fuzz")) {
				continue
			}
			onLine := strings.Contains(line, " "+pkg+" ") || strings.HasSuffix(strings.TrimSpace(strings.Split(line, ">")[0]), " "+pkg)
			if !uses(fn.Body, func(id string) bool {
				return id == "raceDetector" || id == "sequentialHeavy" || id == "driverHeavy" || helpers[id]
			}) {
				if onLine && run.MatchString(fn.Name.Name) {
					t.Errorf("%s %s runs under -race and again without it: the Makefile's -run pattern matches it", pkg, fn.Name.Name)
				}
				continue
			}
			skipping++
			if !run.MatchString(fn.Name.Name) {
				t.Errorf("%s %s skips under -race but the Makefile's run without it does not match it (-run '%s')", pkg, fn.Name.Name, m[1])
			}
			if !onLine {
				t.Errorf("%s %s skips under -race but its package is not on the Makefile's run without it", pkg, fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if skipping == 0 {
		t.Fatal("found no test that skips under -race: the check reads nothing")
	}
}

// uses reports whether body names an identifier match accepts.
func uses(body *ast.BlockStmt, match func(string) bool) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && match(id.Name) {
			found = true
		}
		return !found
	})
	return found
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
