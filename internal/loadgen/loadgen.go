// Package loadgen sends HTTP requests to a server under test, back to
// back on keep-alive connections, and reports throughput and latency
// percentiles. The load and scale commands share it.
package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Request is one HTTP request with a JSON body and a bearer token.
type Request struct {
	Method, URL, Token string
	Body               []byte
}

// Do sends r with c and returns the status and body.
func (r Request) Do(c *http.Client) (int, []byte, error) {
	req, err := http.NewRequest(r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
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

// Result is what one measured run saw. Errors counts transport failures
// and answers other than 200; they are left out of the latencies.
type Result struct {
	RPS      float64
	P50, P99 time.Duration
	Requests int
	Errors   int64
	// Sent counts every request sent, warm-up included, for figures
	// measured over the whole run (such as the server's CPU time).
	Sent int64
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
// sending req back to back: warm first, then dur measured.
func Measure(req Request, conns int, dur, warm time.Duration) Result {
	return Run(conns, dur, warm, func(int) Request { return req })
}

// Run is Measure with a request chosen by next for each send; next is
// called from the worker goroutines with the worker's index and must be
// safe for that.
func Run(conns int, dur, warm time.Duration, next func(worker int) Request) Result {
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
			own := make([]time.Duration, 0, 1<<12)
			for !stop.Load() {
				req := next(i)
				t0 := time.Now()
				status, _, err := req.Do(client)
				d := time.Since(t0)
				sent.Add(1)
				if !recording.Load() {
					continue
				}
				if err != nil || status != http.StatusOK {
					errs.Add(1)
					continue
				}
				own = append(own, d)
			}
			lat[i] = own
		}(i)
	}
	time.Sleep(warm)
	recording.Store(true)
	start := time.Now()
	time.Sleep(dur)
	recording.Store(false)
	elapsed := time.Since(start)
	stop.Store(true)
	wg.Wait()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	res := Result{RPS: float64(len(all)) / elapsed.Seconds(), Requests: len(all), Errors: errs.Load(), Sent: sent.Load()}
	if len(all) > 0 {
		res.P50 = all[len(all)*50/100]
		res.P99 = all[len(all)*99/100]
	}
	return res
}
