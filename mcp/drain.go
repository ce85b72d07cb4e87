package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTimeout bounds how long a connection whose input has ended waits
// for the answers still owed before it reports the end.
const drainTimeout = 2 * time.Minute

// drainTransport is a transport whose connection, when its input ends,
// first lets every request it has read be answered (or cancelled), then
// reports the end: the SDK closes a connection at end of input and drops
// the answers in flight, so `printf '<requests>' | quire mcp` would
// otherwise exit answering none of them.
type drainTransport struct{ sdk.Transport }

func (d drainTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := d.Transport.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &drainConn{Connection: c, pending: map[string]bool{}, closed: make(chan struct{}), idle: make(chan struct{}, 1)}, nil
}

// drainConn counts the requests read and not yet answered.
type drainConn struct {
	sdk.Connection
	mu        sync.Mutex
	pending   map[string]bool
	closed    chan struct{}
	closeOnce sync.Once
	idle      chan struct{} // a token after each answer
}

// idKey names a request id whatever its JSON type (1 and "1" differ).
func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.drain(ctx)
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case req.ID.IsValid() && req.Method == "subscriptions/listen":
			// A listen stream is answered only when it ends: the host
			// closing its input ends it, so it is owed nothing.
		case req.ID.IsValid():
			c.pending[idKey(req.ID)] = true
		case req.Method == "notifications/cancelled":
			// A cancelled request may go unanswered.
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil && p.RequestID != nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					delete(c.pending, idKey(id))
				}
			}
		}
		c.mu.Unlock()
	}
	return msg, nil
}

func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if res, ok := msg.(*jsonrpc.Response); ok && res.ID.IsValid() {
		c.mu.Lock()
		delete(c.pending, idKey(res.ID))
		c.mu.Unlock()
		select {
		case c.idle <- struct{}{}:
		default:
		}
	}
	return err
}

func (c *drainConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

// drain waits until no request is owed an answer, the connection is
// closed, ctx ends or drainTimeout passes.
func (c *drainConn) drain(ctx context.Context) {
	deadline := time.NewTimer(drainTimeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.idle:
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		}
	}
}
