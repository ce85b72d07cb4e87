package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Node is one quire serve process of a cluster, restartable: a restart
// keeps its arguments (its data path among them) and takes a new port.
type Node struct {
	Name string
	// Up says the balancer sends it requests.
	Up atomic.Bool

	args, env []string
	logs      *Log // every run's output, restarts included

	mu   sync.Mutex
	proc *Proc
}

// NewNode is a node running bin serve on a spare loopback port with
// args, and env added to the environment.
func NewNode(name, bin string, args, env []string) *Node {
	return &Node{Name: name, args: append([]string{bin, "serve", "--addr", "127.0.0.1:0"}, args...), env: env, logs: &Log{}}
}

// Start runs the process and returns once it listens; the balancer then
// sends it requests.
func (n *Node) Start() error {
	p, err := start(n.args, n.env, false, n.logs)
	if err != nil {
		return err
	}
	if err := p.Wait(60 * time.Second); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	n.mu.Lock()
	n.proc = p
	n.mu.Unlock()
	n.Up.Store(true)
	return nil
}

// Kill sends SIGKILL and waits for the process to go.
func (n *Node) Kill() {
	n.Up.Store(false)
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p != nil {
		p.Kill()
	}
}

// Stop shuts the running process down gracefully (SIGTERM) and waits for
// it; a node that is down already is left as it is.
func (n *Node) Stop() error {
	n.Up.Store(false)
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.Exited:
		return nil
	default:
	}
	return p.Stop()
}

// URL is the running process's base URL.
func (n *Node) URL() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return ""
	}
	return n.proc.URL
}

// Logs are the node's output over all its runs.
func (n *Node) Logs() *Log { return n.logs }

// Balancer sends each request to the next node that is up, round robin.
// A refused connection marks the node down and the request goes to the
// next one, as a load balancer's passive health check and retry do; a
// request that was sent and got no answer is not retried (it may have
// been applied) and is reported as lost.
type Balancer struct {
	Nodes []*Node
	next  atomic.Uint64
	hc    *http.Client
}

// NewBalancer balances over nodes.
func NewBalancer(nodes []*Node) *Balancer {
	return &Balancer{Nodes: nodes, hc: &http.Client{
		Timeout:   20 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 16},
	}}
}

// Reply is an answer, or why there was none.
type Reply struct {
	Status int
	Body   []byte
	Node   string
	// Lost is set when the request was sent and no answer came: its
	// outcome is unknown.
	Lost error
}

func (r Reply) String() string {
	if r.Lost != nil {
		return fmt.Sprintf("no answer from %s: %v", r.Node, r.Lost)
	}
	return fmt.Sprintf("%d from %s: %.200s", r.Status, r.Node, r.Body)
}

// Do sends a request with a JSON body (none when nil) and a bearer token
// (none when "") to the next node up.
func (b *Balancer) Do(method, path, token string, body any) Reply {
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	for range 2 * len(b.Nodes) {
		n := b.Nodes[b.next.Add(1)%uint64(len(b.Nodes))]
		if !n.Up.Load() {
			continue
		}
		r := b.send(n, method, path, token, raw)
		if r.Lost != nil && errors.Is(r.Lost, syscall.ECONNREFUSED) {
			n.Up.Store(false) // nothing was sent
			continue
		}
		return r
	}
	return Reply{Lost: errors.New("no node up"), Node: "-"}
}

// At sends to one node, whatever the balancer thinks of it.
func (b *Balancer) At(n *Node, method, path, token string, body any) Reply {
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	return b.send(n, method, path, token, raw)
}

// Close closes idle connections.
func (b *Balancer) Close() { b.hc.CloseIdleConnections() }

func (b *Balancer) send(n *Node, method, path, token string, raw []byte) Reply {
	var rd io.Reader
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, n.URL()+path, rd)
	if err != nil {
		return Reply{Lost: err, Node: n.Name}
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := b.hc.Do(req)
	if err != nil {
		return Reply{Lost: err, Node: n.Name}
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return Reply{Lost: err, Node: n.Name}
	}
	return Reply{Status: res.StatusCode, Body: out, Node: n.Name}
}
