// Command quire-load measures live prompt rendering over HTTP against a
// floor: a minimal net/http handler answering a fixed 120-byte JSON body.
//
// It starts, in this process on 127.0.0.1, a quire (temporary data root,
// embedded Redis unless -redis is given) holding a published two-variable
// prompt and an API key, and the floor server. Then, for each in turn, it
// runs -c connections sending requests back to back for -d and prints
// requests per second, p50 and p99 latency, and the ratios of render to
// floor.
//
//	go run ./cmd/quire-load -c 32 -d 5s
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/cache"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/loadgen"
	"golang.org/x/crypto/bcrypt"
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

// floorBody is the floor's fixed answer: 120 bytes of JSON.
var floorBody = []byte(`{"status":"ok","rendered":"Hello Ann, here is a short note about caching.","version":1,"model":"gpt-test","pad":"xxxxx"}`)

func run(conns, rounds int, dur, warm time.Duration, redisURL string) error {
	if len(floorBody) != 120 {
		return fmt.Errorf("floor body is %d bytes, not 120", len(floorBody))
	}
	ctx := context.Background()
	floorURL, stopFloor, err := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(floorBody)
	}))
	if err != nil {
		return err
	}
	defer stopFloor()

	q, err := startQuire(ctx, redisURL)
	if err != nil {
		return err
	}
	defer q.close()

	renderReq := loadgen.Request{Method: "POST", URL: q.url + "/v1/prompts/" + q.promptID + "/render", Token: q.key,
		Body: []byte(`{"variables":{"name":"Ann","topic":"caching"}}`)}
	// Check the render answers before measuring it.
	if status, body, err := renderReq.Do(http.DefaultClient); err != nil || status != 200 {
		return fmt.Errorf("render check: %d %s %v", status, body, err)
	}

	fmt.Printf("quire-load: %d connections, %d rounds of %s per target (after %s warm-up), GOMAXPROCS=%d\n", conns, rounds, dur, warm, runtimeProcs())
	fmt.Printf("%-8s %5s %10s %10s %10s %8s\n", "target", "round", "req/s", "p50", "p99", "errors")
	var floors, renders []loadgen.Result
	for i := range rounds {
		// Alternate, so a burst of load from elsewhere on the machine
		// hits both targets alike.
		floors = append(floors, loadgen.Measure(loadgen.Request{Method: "POST", URL: floorURL + "/", Body: renderReq.Body}, conns, dur, warm))
		renders = append(renders, loadgen.Measure(renderReq, conns, dur, warm))
		for _, r := range []struct {
			name string
			res  loadgen.Result
		}{{"floor", floors[i]}, {"render", renders[i]}} {
			fmt.Printf("%-8s %5d %10.0f %10s %10s %8d\n", r.name, i+1, r.res.RPS, r.res.P50, r.res.P99, r.res.Errors)
		}
	}
	floor, render := loadgen.Median(floors), loadgen.Median(renders)
	fmt.Printf("%-8s %5s %10.0f %10s %10s\n", "floor", "med", floor.RPS, floor.P50, floor.P99)
	fmt.Printf("%-8s %5s %10.0f %10s %10s\n", "render", "med", render.RPS, render.P50, render.P99)
	rpsRatio := render.RPS / floor.RPS
	p99Ratio := float64(render.P99) / float64(floor.P99)
	fmt.Printf("render/floor: req/s %.2fx (goal >= 0.50x), p99 %.2fx (goal <= 2.00x)\n", rpsRatio, p99Ratio)
	st := q.prompts.Stats()
	fmt.Printf("cache: local hits %d misses %d, redis hits %d misses %d errors %d, git loads %d\n",
		st.LocalHits, st.LocalMisses, st.RedisHits, st.RedisMisses, st.RedisErrors, st.Loads)
	if rpsRatio < 0.5 || p99Ratio > 2 {
		fmt.Println("quire-load: goal missed")
	}
	return nil
}

// serve runs h on a fresh 127.0.0.1 port.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// quireUnderTest is a quire with one published prompt and an API key.
type quireUnderTest struct {
	url, promptID, key string
	prompts            *cache.Prompts
	close              func()
}

func startQuire(ctx context.Context, redisURL string) (*quireUnderTest, error) {
	root, err := os.MkdirTemp("", "quire-load-*")
	if err != nil {
		return nil, err
	}
	store, err := gitstore.Open(gitstore.Options{Root: root})
	if err != nil {
		return nil, err
	}
	rd, err := cache.Open(ctx, cache.Options{URL: redisURL, Prefix: fmt.Sprintf("quire-load:%d:", time.Now().UnixNano())})
	if err != nil {
		return nil, err
	}
	prompts := cache.NewPrompts(rd, store, cache.PromptOptions{})
	store.OnChange(prompts.Invalidate)
	api := httpapi.New(httpapi.Config{
		Meta: store, Versions: store, Sessions: rd, Logger: slog.New(slog.DiscardHandler),
		Limits: store.Limits(), BcryptCost: bcrypt.MinCost,
		Prompts: prompts, Payloads: store, PromptCache: prompts,
	})
	url, stop, err := serve(api)
	if err != nil {
		return nil, err
	}
	q := &quireUnderTest{url: url, prompts: prompts, close: func() {
		stop()
		prompts.Close()
		rd.DeleteAll(context.Background())
		rd.Close()
		os.RemoveAll(root)
	}}
	if err := q.seed(ctx, store); err != nil {
		q.close()
		return nil, err
	}
	return q, nil
}

// seed creates the admin, a project, the prompt (published) and a read key.
func (q *quireUnderTest) seed(ctx context.Context, store *gitstore.Store) error {
	hash, _ := bcrypt.GenerateFromPassword([]byte("load-password"), bcrypt.MinCost)
	if err := store.CreateUser(ctx, quire.Actor{Name: "load"}, &quire.User{Email: "load@example.com", Name: "Load", Role: quire.RoleAdmin, PasswordHash: string(hash)}); err != nil {
		return err
	}
	var login struct{ Token string }
	if err := q.call("POST", "/v1/auth/login", "", map[string]string{"email": "load@example.com", "password": "load-password"}, &login); err != nil {
		return err
	}
	var proj struct{ Project struct{ ID string } }
	if err := q.call("POST", "/v1/projects", login.Token, map[string]string{"name": "Load"}, &proj); err != nil {
		return err
	}
	var prompt struct{ Prompt struct{ ID string } }
	if err := q.call("POST", "/v1/projects/"+proj.Project.ID+"/prompts", login.Token, map[string]string{"name": "Greeting"}, &prompt); err != nil {
		return err
	}
	q.promptID = prompt.Prompt.ID
	body := map[string]any{"template": "Hello {{name}}, here is a short note about {{topic}}.", "model": "gpt-test", "model_params": map[string]any{"temperature": 0.2}}
	if err := q.call("POST", "/v1/prompts/"+q.promptID+"/versions", login.Token, body, nil); err != nil {
		return err
	}
	if err := q.call("POST", "/v1/prompts/"+q.promptID+"/versions/1/publish", login.Token, nil, nil); err != nil {
		return err
	}
	var key struct{ Token string }
	if err := q.call("POST", "/v1/api-keys", login.Token, map[string]any{"name": "load", "scope": "read"}, &key); err != nil {
		return err
	}
	q.key = key.Token
	return nil
}

func (q *quireUnderTest) call(method, path, token string, body, out any) error {
	return loadgen.Call(q.url, method, path, token, body, out)
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
