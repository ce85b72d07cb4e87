package httpstatus

import (
	"net/http"
	"testing"

	"github.com/quire/quire"
)

// Every code has a status of its own kind: a client error for a client's
// fault, a server error otherwise; an unknown code is a 500.
func TestEveryCodeHasAStatus(t *testing.T) {
	for _, c := range quire.Codes {
		if _, ok := statusOf[c]; !ok {
			t.Errorf("code %q has no status", c)
		}
	}
	for code, want := range map[quire.Code]int{
		quire.ENOTFOUND: http.StatusNotFound,
		quire.EREVIEW:   http.StatusConflict,
		quire.ENOSPACE:  http.StatusInsufficientStorage,
		"no_such_code":  http.StatusInternalServerError,
	} {
		if got := Of(code); got != want {
			t.Errorf("Of(%q) = %d, want %d", code, got, want)
		}
	}
}
