// Command quire-load measures live prompt rendering over HTTP against a
// floor: a minimal net/http handler answering a fixed 120-byte JSON body.
//
// It starts, in this process on 127.0.0.1, a quire (temporary data root,
// embedded Redis unless -redis is given) holding a published two-variable
// prompt and an API key, and the floor server. Then, for each in turn, it
// runs -c connections sending requests back to back for -d and prints
// requests per second, p50 and p99 latency, and the ratios of render to
// floor. cmd/quire-bench runs the whole suite, with the servers in
// processes of their own.
//
//	go run ./cmd/quire-load -c 32 -d 5s
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/quire/quire/internal/bench"
)

func main() {
	conns := flag.Int("c", 32, "connections")
	dur := flag.Duration("d", 5*time.Second, "duration of each measured run")
	warm := flag.Duration("warmup", time.Second, "warm-up before each run")
	rounds := flag.Int("rounds", 3, "rounds of floor then render; medians are reported")
	redisURL := flag.String("redis", "", "redis:// URL for quire's cache (default: embedded)")
	flag.Parse()
	if err := run(*conns, *rounds, *dur, *warm, *redisURL); err != nil {
		fmt.Fprintln(os.Stderr, "quire-load:", err)
		os.Exit(1)
	}
}

func run(conns, rounds int, dur, warm time.Duration, redisURL string) error {
	floorURL, stopFloor, err := bench.Serve(bench.Floor())
	if err != nil {
		return err
	}
	defer stopFloor()
	q, err := bench.Start(context.Background(), bench.Options{RedisURL: redisURL})
	if err != nil {
		return err
	}
	defer q.Close()

	renderReq := bench.Request{Method: "POST", URL: q.URL + "/v1/prompts/" + q.PromptID + "/render", Token: q.Key, Body: bench.RenderBody}
	// Check the render answers before measuring it.
	if status, body, err := renderReq.Do(http.DefaultClient); err != nil || status != 200 {
		return fmt.Errorf("render check: %d %s %v", status, body, err)
	}

	fmt.Printf("quire-load: %d connections, %d rounds of %s per target (after %s warm-up), GOMAXPROCS=%d\n", conns, rounds, dur, warm, runtime.GOMAXPROCS(0))
	fmt.Printf("%-8s %5s %10s %10s %10s %8s\n", "target", "round", "req/s", "p50", "p99", "errors")
	var floors, renders []bench.Result
	for i := range rounds {
		// Alternate, so a burst of load from elsewhere on the machine
		// hits both targets alike.
		floors = append(floors, bench.Measure(bench.Request{Method: "POST", URL: floorURL + "/", Body: renderReq.Body}, conns, dur, warm))
		renders = append(renders, bench.Measure(renderReq, conns, dur, warm))
		for _, r := range []struct {
			name string
			res  bench.Result
		}{{"floor", floors[i]}, {"render", renders[i]}} {
			fmt.Printf("%-8s %5d %10.0f %10s %10s %8d\n", r.name, i+1, r.res.RPS, r.res.P50, r.res.P99, r.res.Errors)
		}
	}
	floor, render := bench.Median(floors), bench.Median(renders)
	fmt.Printf("%-8s %5s %10.0f %10s %10s\n", "floor", "med", floor.RPS, floor.P50, floor.P99)
	fmt.Printf("%-8s %5s %10.0f %10s %10s\n", "render", "med", render.RPS, render.P50, render.P99)
	rpsRatio := render.RPS / floor.RPS
	p99Ratio := float64(render.P99) / float64(floor.P99)
	fmt.Printf("render/floor: req/s %.2fx (goal >= 0.50x), p99 %.2fx (goal <= 2.00x)\n", rpsRatio, p99Ratio)
	st := q.Prompts.Stats()
	fmt.Printf("cache: local hits %d misses %d, redis hits %d misses %d errors %d, git loads %d\n",
		st.LocalHits, st.LocalMisses, st.RedisHits, st.RedisMisses, st.RedisErrors, st.Loads)
	if rpsRatio < 0.5 || p99Ratio > 2 {
		fmt.Println("quire-load: goal missed")
	}
	return nil
}
