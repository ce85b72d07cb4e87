package valid

import (
	"strings"
	"testing"

	"github.com/quire/quire"
)

func TestIdentName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"Ada Lovelace", true},
		{"Zoë (ops)", true},
		{"tab\there", true},
		{"a\nb", false},
		{"a\rb", false},
		{"a\x00b", false},
		{"Mallory <ceo@example.com>", false},
		{"x>y", false},
		{"   ", false},
		{"", false},
		{strings.Repeat("n", 201), false},
	} {
		err := IdentName("name", tc.name, 200)
		if (err == nil) != tc.ok {
			t.Errorf("IdentName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
			continue
		}
		if err != nil {
			if quire.ErrorCode(err) != quire.EINVALID || quire.ErrorDetails(err)["field"] != "name" || !strings.Contains(quire.ErrorMessage(err), "name") {
				t.Errorf("IdentName(%q): %v %v, want invalid naming the field", tc.name, err, quire.ErrorDetails(err))
			}
		}
	}
}
