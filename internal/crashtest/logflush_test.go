package crashtest

import (
	"net/http"
	"strings"
	"testing"
)

// TestSIGTERMWritesEveryLogLine: quire serve batches its log's lines
// (telemetry.LogWriter); a SIGTERM right after the last answer still
// leaves one access log line per request, and the stop line last.
func TestSIGTERMWritesEveryLogLine(t *testing.T) {
	bin := quireBinary(t)
	s, err := startServer(t, bin, t.TempDir(), false, true)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	for range n {
		res, err := http.Get(s.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if got := len(s.logs.Lines(`"route":"/healthz"`)); got != n {
		t.Fatalf("%d access log lines for %d requests after SIGTERM:\n%s", got, n, s.logs.Tail(2000))
	}
	out := strings.TrimSpace(s.logs.String())
	if last := out[strings.LastIndexByte(out, '\n')+1:]; !strings.Contains(last, `"msg":"quire stopped"`) {
		t.Fatalf("the last line is not the stop line: %s", last)
	}
}
