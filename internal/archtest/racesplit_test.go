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

	onLine := map[string]bool{} // the packages that run lists
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "./") {
			onLine[f] = true
		}
	}

	// The test files of each package; a package's helpers may sit in
	// another file than the tests that call them.
	fset := token.NewFileSet()
	files := map[string][]*ast.File{}
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
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		pkg := "./" + filepath.ToSlash(rel)
		files[pkg] = append(files[pkg], f)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	skipping := 0
	for pkg, fs := range files {
		// The functions that read raceDetector (the tests that skip, and
		// helpers such as sequentialHeavy), then the tests that read it
		// or call one of them.
		skips := map[string]bool{"raceDetector": true}
		for _, f := range fs {
			for _, fn := range funcs(f) {
				if uses(fn.Body, func(id string) bool { return id == "raceDetector" }) {
					skips[fn.Name.Name] = true
				}
			}
		}
		for _, f := range fs {
			for _, fn := range funcs(f) {
				name := fn.Name.Name
				if !strings.HasPrefix(name, "Test") && !strings.HasPrefix(name, "Fuzz") {
					continue
				}
				if !uses(fn.Body, func(id string) bool { return skips[id] }) {
					if onLine[pkg] && run.MatchString(name) {
						t.Errorf("%s %s runs under -race and again without it: the Makefile's -run pattern matches it", pkg, name)
					}
					continue
				}
				skipping++
				if !run.MatchString(name) {
					t.Errorf("%s %s skips under -race but the Makefile's run without it does not match it (-run '%s')", pkg, name, m[1])
				}
				if !onLine[pkg] {
					t.Errorf("%s %s skips under -race but its package is not on the Makefile's run without it", pkg, name)
				}
			}
		}
	}
	if skipping == 0 {
		t.Fatal("found no test that skips under -race: the check reads nothing")
	}
}

// funcs are the functions with bodies that f declares.
func funcs(f *ast.File) []*ast.FuncDecl {
	var out []*ast.FuncDecl
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
			out = append(out, fn)
		}
	}
	return out
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
