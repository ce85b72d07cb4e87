// Package bench holds what quire's benchmark programs share: an HTTP load
// client, the floor handler every HTTP figure is compared with, and a
// seeded quire to measure.
package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// FloorBody is the floor's fixed answer: 120 bytes of JSON.
var FloorBody = []byte(`{"status":"ok","rendered":"Hello Ann, here is a short note about caching.","version":1,"model":"gpt-test","pad":"xxxxx"}`)

// Floor is the least an HTTP server can do per request: read the body and
// answer FloorBody. Quire's hot paths are measured as a ratio to it.
func Floor() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(FloorBody)
	})
}

// Serve runs h on a fresh 127.0.0.1 port and returns its base URL and a
// stop function.
func Serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// Request is one request of a load run, sent as is over and over.
type Request struct {
	Method, URL, Token string
	Body               []byte
	// Header is sent besides Authorization and Content-Type (MCP's
	// session and protocol headers).
	Header map[string]string
}

func (r Request) build() (*http.Request, error) {
	req, err := http.NewRequest(r.Method, r.URL, nil)
	if err != nil {
		return nil, err
	}
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	return req, nil
}

// Do sends r once and returns the status and body.
func (r Request) Do(c *http.Client) (int, []byte, error) {
	req, err := r.build()
	if err != nil {
		return 0, nil, err
	}
	if len(r.Body) > 0 {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(r.Body)), int64(len(r.Body))
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// Call sends one JSON request to baseURL+path and decodes a 2xx answer
// into out (when not nil); any other status is an error quoting the body.
func Call(baseURL, method, path, token string, body, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	status, resp, err := Request{Method: method, URL: baseURL + path, Token: token, Body: b}.Do(http.DefaultClient)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, status, resp)
	}
	if out != nil {
		return json.Unmarshal(resp, out)
	}
	return nil
}

// Result is one load run: throughput and latency of successful requests.
// Errors counts transport failures and answers other than 200; they are
// left out of the latencies.
type Result struct {
	RPS      float64
	P50, P99 time.Duration
	Requests int
	Errors   int64
	// Sent counts every request sent, warm-up included, for figures
	// measured over the whole run (such as the server's CPU time).
	Sent int64
	// CPUPerRequest is the server's CPU time per request sent in the
	// timed run (MeasureServer only).
	CPUPerRequest time.Duration
}

// MedianDuration is the median of ds (the upper one of an even count).
func MedianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// Median takes the median of each figure on its own.
func Median(rs []Result) Result {
	pick := func(f func(Result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	return Result{
		RPS:      pick(func(r Result) float64 { return r.RPS }),
		P50:      time.Duration(pick(func(r Result) float64 { return float64(r.P50) })),
		P99:      time.Duration(pick(func(r Result) float64 { return float64(r.P99) })),
		Requests: int(pick(func(r Result) float64 { return float64(r.Requests) })),
		Errors:   int64(pick(func(r Result) float64 { return float64(r.Errors) })),
	}
}

// Measure runs conns workers, each on its own keep-alive connection,
// sending req back to back: warm first, then dur measured. Each worker
// builds its request once and only renews the body reader, so the client
// spends as little CPU as it can on a machine it shares with the server.
func Measure(req Request, conns int, dur, warm time.Duration) Result {
	return load(conns, dur, warm, req.sender, nil)
}

// MeasureServer is Measure that also reads the CPU time of the server's
// process pid over the timed run, and sets Result.CPUPerRequest: the
// warm-up, which opens the connections and regrows a heap the server
// may have given back while idle, is left out, as it is of the rates
// and latencies.
func MeasureServer(pid int, req Request, conns int, dur, warm time.Duration) (Result, error) {
	var (
		cpu  [2]time.Duration
		sent [2]int64
		errs [2]error
	)
	res := load(conns, dur, warm, req.sender, func(closing bool, n int64) {
		i := 0
		if closing {
			i = 1
		}
		cpu[i], errs[i] = ProcessCPU(pid)
		sent[i] = n
	})
	if err := errors.Join(errs[:]...); err != nil {
		return res, err
	}
	if n := sent[1] - sent[0]; n > 0 {
		res.CPUPerRequest = (cpu[1] - cpu[0]) / time.Duration(n)
	}
	return res, nil
}

// sender is the worker of Measure: req, prepared once per connection.
func (req Request) sender(int) func(*http.Client) bool {
	hr, err := req.build()
	if err != nil {
		return func(*http.Client) bool { return false }
	}
	body := bytes.NewReader(req.Body)
	rc := io.NopCloser(body)
	return func(client *http.Client) bool {
		// A request without a body keeps http.NoBody: a non-nil
		// body of length 0 would be sent chunked.
		if len(req.Body) > 0 {
			body.Reset(req.Body)
			hr.Body, hr.ContentLength = rc, int64(len(req.Body))
		}
		res, err := client.Do(hr)
		if err != nil {
			return false
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}
}

// Run is Measure with a request chosen by next for each send; next is
// called from the worker goroutines with the worker's index and must be
// safe for that.
func Run(conns int, dur, warm time.Duration, next func(worker int) Request) Result {
	return load(conns, dur, warm, func(i int) func(*http.Client) bool {
		return func(client *http.Client) bool {
			status, _, err := next(i).Do(client)
			return err == nil && status == http.StatusOK
		}
	}, nil)
}

// load runs conns workers, each sending with the function worker(i)
// returns until stopped, and times the sends made after warm for dur.
// window, when set, is called as the timed run opens and as it closes,
// with the count of sends so far.
func load(conns int, dur, warm time.Duration, worker func(i int) func(*http.Client) bool, window func(closing bool, sent int64)) Result {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var (
		recording atomic.Bool
		stop      atomic.Bool
		errs      atomic.Int64
		sent      atomic.Int64
		wg        sync.WaitGroup
	)
	lat := make([][]time.Duration, conns)
	for i := range conns {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			own := make([]time.Duration, 0, 1<<14)
			send := worker(i)
			for !stop.Load() {
				t0 := time.Now()
				ok := send(client)
				d := time.Since(t0)
				sent.Add(1)
				if !recording.Load() {
					continue
				}
				if !ok {
					errs.Add(1)
					continue
				}
				own = append(own, d)
			}
			lat[i] = own
		}(i)
	}
	time.Sleep(warm)
	if window != nil {
		window(false, sent.Load())
	}
	recording.Store(true)
	start := time.Now()
	time.Sleep(dur)
	recording.Store(false)
	elapsed := time.Since(start)
	if window != nil {
		window(true, sent.Load())
	}
	stop.Store(true)
	wg.Wait()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	res := Result{RPS: float64(len(all)) / elapsed.Seconds(), Requests: len(all), Errors: errs.Load(), Sent: sent.Load()}
	if len(all) > 0 {
		res.P50 = all[len(all)*50/100]
		res.P99 = all[len(all)*99/100]
	}
	return res
}

// LoadAvg is the machine's 1, 5 and 15 minute load averages, or
// "unknown": reports print it beside figures a busy machine skews.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// ProcessCPU is the user and system CPU time process pid has used, from
// /proc.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read CPU time: %w", err)
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 12th and 13th, in clock ticks (100 a second on Linux).
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, fmt.Errorf("read CPU time: unexpected /proc stat")
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read CPU time: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// CPUPer runs load, which returns how many requests it sent, and returns
// the CPU time process pid (the server) spent per request: unlike
// latency, it hardly depends on what else the machine is running.
func CPUPer(pid int, load func() int64) (time.Duration, error) {
	c0, err := ProcessCPU(pid)
	if err != nil {
		return 0, err
	}
	n := load()
	c1, err := ProcessCPU(pid)
	if err != nil || n == 0 {
		return 0, err
	}
	return (c1 - c0) / time.Duration(n), nil
}
