package valid_test

import (
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

var treeLimits = quire.Limits{MaxFile: 10, MaxVersionFiles: 3, MaxVersionBytes: 20}

// treeCases are whole lists of entries, as an API write, a zip or a push
// gives them, with the error code and message part they must draw.
var treeCases = []struct {
	name    string
	entries []valid.Entry
	code    quire.Code
	msg     string
}{
	{"ok", []valid.Entry{{Path: "a.md", Mode: valid.ModeFile, Size: 5}, {Path: "d", Mode: valid.ModeDir}, {Path: "d/b", Mode: valid.ModeExecutable, Size: 5}}, "", ""},
	{"bad path", []valid.Entry{{Path: "a\\b.md", Mode: valid.ModeFile}}, quire.EINVALID, `a\b.md: invalid file_path: must not contain a backslash`},
	{"symlink", []valid.Entry{{Path: "link", Mode: valid.ModeSymlink}}, quire.EINVALID, "link: symbolic links are not allowed"},
	{"submodule", []valid.Entry{{Path: "sub", Mode: valid.ModeSubmodule}}, quire.EINVALID, "sub: submodules are not allowed"},
	{"odd mode", []valid.Entry{{Path: "x", Mode: 0o100664}}, quire.EINVALID, "file mode 100664 is not allowed"},
	{"big file", []valid.Entry{{Path: "big", Mode: valid.ModeFile, Size: 11}}, quire.ETOOLARGE, "file big is 11 bytes; the limit is 10"},
	{"twice", []valid.Entry{{Path: "a", Mode: valid.ModeFile}, {Path: "a", Mode: valid.ModeFile}}, quire.EINVALID, "file a is given twice"},
	{"collision", []valid.Entry{{Path: "README.md", Mode: valid.ModeFile}, {Path: "readme.md", Mode: valid.ModeFile}}, quire.ECONFLICT, "after case folding"},
	{"dir collision", []valid.Entry{{Path: "Docs/a", Mode: valid.ModeFile}, {Path: "docs/b", Mode: valid.ModeFile}}, quire.ECONFLICT, "after case folding"},
	{"too many", []valid.Entry{{Path: "a", Mode: valid.ModeFile}, {Path: "b", Mode: valid.ModeFile}, {Path: "c", Mode: valid.ModeFile}, {Path: "d", Mode: valid.ModeFile}}, quire.ETOOLARGE, "at most 3 files"},
	{"too large", []valid.Entry{{Path: "a", Mode: valid.ModeFile, Size: 10}, {Path: "b", Mode: valid.ModeFile, Size: 10}, {Path: "c", Mode: valid.ModeFile, Size: 1}}, quire.ETOOLARGE, "at most 20 bytes"},
	{"gitattributes", []valid.Entry{{Path: ".gitattributes", Mode: valid.ModeFile, Size: 3, Content: []byte(strings.Repeat("x", valid.MaxAttributesLine+1))}}, quire.EINVALID, "longer than"},
}

func TestTree(t *testing.T) {
	l := treeLimits
	for _, tc := range treeCases {
		t.Run(tc.name, func(t *testing.T) {
			err := valid.Tree(tc.entries, l)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("Tree = %v, want nil", err)
				}
				return
			}
			if quire.ErrorCode(err) != tc.code || !strings.Contains(quire.ErrorMessage(err), tc.msg) {
				t.Fatalf("Tree = %v (%s), want %s containing %q", err, quire.ErrorCode(err), tc.code, tc.msg)
			}
		})
	}
}

func TestFilesAreRegular(t *testing.T) {
	es := valid.Files([]quire.FileContent{{Path: "a", Content: []byte("abc")}})
	if len(es) != 1 || es[0].Mode != valid.ModeFile || es[0].Size != 3 {
		t.Fatalf("Files = %+v", es)
	}
}
