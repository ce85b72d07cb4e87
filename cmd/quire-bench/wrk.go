package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/quire/quire/internal/bench"
)

// wrk runs the load tool wrk (Debian's package) against one request: an
// outside client in C, whose own cost per request is lower than the Go
// client's, so the server's share of the machine shows more plainly.
// Issue 30's goals are stated for both clients.

var (
	wrkRate     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkRequests = regexp.MustCompile(`(\d+) requests in`)
	wrkP50      = regexp.MustCompile(`\n\s+50%\s+([0-9.]+)(us|ms|s)`)
	wrkP99      = regexp.MustCompile(`\n\s+99%\s+([0-9.]+)(us|ms|s)`)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkErrors   = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// measureWrk runs wrk with conns connections for dur (after a warm-up run
// of warm) and reads server pid's CPU time around the timed run.
func measureWrk(pid int, req bench.Request, conns int, dur, warm time.Duration) (bench.Result, error) {
	script, err := os.CreateTemp("", "quire-bench-*.lua")
	if err != nil {
		return bench.Result{}, err
	}
	defer os.Remove(script.Name())
	lua := fmt.Sprintf("wrk.method = %q\n", req.Method)
	if req.Body != nil {
		lua += fmt.Sprintf("wrk.body = %q\nwrk.headers[\"Content-Type\"] = \"application/json\"\n", req.Body)
	}
	if req.Token != "" {
		lua += fmt.Sprintf("wrk.headers[\"Authorization\"] = %q\n", "Bearer "+req.Token)
	}
	if _, err := script.WriteString(lua); err != nil {
		return bench.Result{}, err
	}
	script.Close()
	run := func(d time.Duration) (string, error) {
		out, err := exec.Command("wrk", "-t2", "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(int(max(d.Seconds(), 1)))+"s",
			"--latency", "-s", script.Name(), req.URL).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("wrk: %v\n%s", err, out)
		}
		return string(out), nil
	}
	if _, err := run(warm); err != nil {
		return bench.Result{}, err
	}
	var out string
	cpu, err := bench.CPUPer(pid, func() int64 {
		if out, err = run(dur); err != nil {
			return 1
		}
		m := wrkRequests.FindStringSubmatch(out)
		if m == nil {
			return 1
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return max(n, 1)
	})
	if err != nil {
		return bench.Result{}, err
	}
	res := bench.Result{CPUPerRequest: cpu}
	m := wrkRate.FindStringSubmatch(out)
	if m == nil {
		return res, fmt.Errorf("wrk printed no rate:\n%s", out)
	}
	res.RPS, _ = strconv.ParseFloat(m[1], 64)
	if m := wrkRequests.FindStringSubmatch(out); m != nil {
		res.Requests, _ = strconv.Atoi(m[1])
	}
	res.P50, res.P99 = wrkLatency(wrkP50, out), wrkLatency(wrkP99, out)
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		res.Errors += n
	}
	if m := wrkErrors.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.ParseInt(s, 10, 64)
			res.Errors += n
		}
	}
	return res, nil
}

func wrkLatency(re *regexp.Regexp, out string) time.Duration {
	m := re.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[strings.TrimSpace(m[2])]
	return time.Duration(v * float64(unit))
}

// haveWrk reports whether wrk is installed.
func haveWrk() bool {
	_, err := exec.LookPath("wrk")
	return err == nil
}
