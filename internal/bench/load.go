// Package bench holds what quire's benchmark programs share: an HTTP load
// client, the floor handler every HTTP figure is compared with, and a
// seeded quire to measure.
package bench

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"sort"
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

// Result is one load run: throughput and latency of successful requests.
type Result struct {
	RPS      float64
	P50, P99 time.Duration
	Errors   int64
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
		RPS:    pick(func(r Result) float64 { return r.RPS }),
		P50:    time.Duration(pick(func(r Result) float64 { return float64(r.P50) })),
		P99:    time.Duration(pick(func(r Result) float64 { return float64(r.P99) })),
		Errors: int64(pick(func(r Result) float64 { return float64(r.Errors) })),
	}
}

// Measure runs conns workers, each on its own keep-alive connection,
// sending req back to back: warm first, then dur measured. Each worker
// builds its request once and only renews the body reader, so the client
// spends as little CPU as it can on a machine it shares with the server.
func Measure(req Request, conns int, dur, warm time.Duration) Result {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var (
		recording atomic.Bool
		stop      atomic.Bool
		errs      atomic.Int64
		wg        sync.WaitGroup
	)
	lat := make([][]time.Duration, conns)
	for i := range conns {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			own := make([]time.Duration, 0, 1<<14)
			hr, err := req.build()
			if err != nil {
				errs.Add(1)
				return
			}
			body := bytes.NewReader(req.Body)
			rc := io.NopCloser(body)
			for !stop.Load() {
				// A request without a body keeps http.NoBody: a non-nil
				// body of length 0 would be sent chunked.
				if len(req.Body) > 0 {
					body.Reset(req.Body)
					hr.Body, hr.ContentLength = rc, int64(len(req.Body))
				}
				t0 := time.Now()
				res, err := client.Do(hr)
				ok := err == nil && res.StatusCode == http.StatusOK
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				d := time.Since(t0)
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
	res := Result{RPS: float64(len(all)) / elapsed.Seconds(), Errors: errs.Load()}
	if len(all) > 0 {
		res.P50 = all[len(all)*50/100]
		res.P99 = all[len(all)*99/100]
	}
	return res
}
