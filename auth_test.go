package quire_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire"
)

func TestSecretMatches(t *testing.T) {
	secret := quire.NewSecret()
	hash := quire.HashSecret(secret)
	for _, tc := range []struct {
		name         string
		secret, hash string
		want         bool
	}{
		{"right", secret, hash, true},
		{"other secret", quire.NewSecret(), hash, false},
		{"secret one character short", secret[:len(secret)-1], hash, false},
		{"hash one character short", secret, hash[:len(hash)-1], false},
		{"hash upper case", secret, strings.ToUpper(hash), false},
		{"empty hash", secret, "", false},
		{"empty secret", "", hash, false},
		{"the hash as the secret", hash, hash, false},
	} {
		if got := quire.SecretMatches(tc.secret, tc.hash); got != tc.want {
			t.Errorf("%s: SecretMatches = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSecretsComparedInConstantTime reads quire's source: SecretMatches
// must compare with crypto/subtle, and no other code may compare a stored
// secret or password hash with ==, != or bytes/strings comparisons, whose
// time tells an attacker how many leading bytes they guessed right.
func TestSecretsComparedInConstantTime(t *testing.T) {
	fset := token.NewFileSet()
	usesSubtle := false
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "repos") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Name.Name == "SecretMatches" && n.Recv == nil && calls(n, "subtle", "ConstantTimeCompare") {
					usesSubtle = true
				}
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isHash(n.X) && !isEmpty(n.Y) || isHash(n.Y) && !isEmpty(n.X)) {
					t.Errorf("%s: a secret hash compared with %s; use quire.SecretMatches", fset.Position(n.Pos()), n.Op)
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "bytes" || pkg.Name == "strings") &&
						(sel.Sel.Name == "Equal" || sel.Sel.Name == "EqualFold" || sel.Sel.Name == "Compare") {
						for _, a := range n.Args {
							if isHash(a) {
								t.Errorf("%s: a secret hash compared with %s.%s; use quire.SecretMatches", fset.Position(n.Pos()), pkg.Name, sel.Sel.Name)
							}
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d source files read; is the test running in the module root?", checked)
	}
	if !usesSubtle {
		t.Error("SecretMatches does not call subtle.ConstantTimeCompare")
	}
}

// isHash reports whether e is a stored secret: a SecretHash or
// PasswordHash field, or a conversion of one ([]byte(u.PasswordHash)).
func isHash(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.CallExpr:
			_, toSlice := x.Fun.(*ast.ArrayType)
			id, isIdent := x.Fun.(*ast.Ident)
			if len(x.Args) != 1 || !toSlice && !(isIdent && id.Name == "string") {
				return false
			}
			e = x.Args[0]
		case *ast.SelectorExpr:
			return x.Sel.Name == "SecretHash" || x.Sel.Name == "PasswordHash"
		default:
			return false
		}
	}
}

func isEmpty(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && (lit.Value == `""` || lit.Value == "``")
}

func calls(fn *ast.FuncDecl, pkg, name string) bool {
	found := false
	ast.Inspect(fn, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkg {
				found = true
			}
		}
		return !found
	})
	return found
}

// TestSecretMatchesAllocs: every authenticated request checks a secret,
// so the check allocates nothing, and secrets longer than a token's still
// match their hash.
func TestSecretMatchesAllocs(t *testing.T) {
	secret := quire.NewSecret()
	hash := quire.HashSecret(secret)
	if n := testing.AllocsPerRun(100, func() { quire.SecretMatches(secret, hash) }); n != 0 {
		t.Fatalf("SecretMatches allocates %v times per call", n)
	}
	long := strings.Repeat("ab", 50)
	if !quire.SecretMatches(long, quire.HashSecret(long)) {
		t.Fatal("a 100-character secret does not match its own hash")
	}
}

// TestParseToken: a token made by Token gives back its parts, the id with
// its dashes; anything else is refused.
func TestParseToken(t *testing.T) {
	const id = "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"
	secret := strings.Repeat("ab", 32)
	for _, prefix := range []string{quire.SessionPrefix, quire.APIKeyPrefix} {
		gotPrefix, gotID, gotSecret, ok := quire.ParseToken(quire.Token(prefix, id, secret))
		if !ok || gotPrefix != prefix || gotID != id || gotSecret != secret {
			t.Errorf("%s: got %q %q %q %v", prefix, gotPrefix, gotID, gotSecret, ok)
		}
	}
	for _, tok := range []string{
		"",
		quire.APIKeyPrefix + "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d" + secret, // no separator
		quire.APIKeyPrefix + "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5" + "_" + secret,
		quire.APIKeyPrefix + "0A1B2C3D4E5F6A7B8C9D0E1F2A3B4C5D" + "_" + secret,
		quire.APIKeyPrefix + "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d" + "_" + secret[1:],
		"qx_" + "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d" + "_" + secret,
	} {
		if _, _, _, ok := quire.ParseToken(tok); ok {
			t.Errorf("%q parsed", tok)
		}
	}
}
