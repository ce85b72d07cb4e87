package valid

import "testing"

var slugFromTests = []struct{ name, want string }{
	{"PDF tools", "pdf-tools"},
	{"Café Über", "cafe-uber"},
	{"Café Ünïcode", "cafe-unicode"},
	{"C++ & Go", "c-and-go"},
	{"a__b--c", "a-b-c"},
	{"  spaced  out  ", "spaced-out"},
	{"über-cool 2", "uber-cool-2"},
	{"---", ""},
	{"", ""},
	{"x0123456789012345678901234567890123456789012345678901234567890123456789", "x01234567890123456789012345678901234567890123456789012345678901"},
}

func TestSlugFrom(t *testing.T) {
	for _, tt := range slugFromTests {
		got := SlugFrom(tt.name)
		if got != tt.want {
			t.Errorf("SlugFrom(%q) = %q, want %q", tt.name, got, tt.want)
		}
		if got != "" {
			if err := Slug(got); err != nil {
				t.Errorf("SlugFrom(%q) = %q: %v", tt.name, got, err)
			}
		}
	}
}
