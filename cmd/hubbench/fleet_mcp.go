package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// An MCP client of the fleet: JSON-RPC calls of the hub's MCP tools, over
// streamable HTTP (/mcp, one POST per call, answered as application/json)
// or over the stdio of a `hub mcp` process (newline-delimited JSON,
// several calls in flight).

const mcpProtocol = "2025-06-18"

// rpcCaller sends one JSON-RPC request and returns its result.
type rpcCaller interface {
	call(ctx context.Context, method string, params any) (json.RawMessage, error)
	notify(ctx context.Context, method string) error
}

type rpcResponse struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r *rpcResponse) outcome() (json.RawMessage, error) {
	if r.Error != nil {
		return nil, fmt.Errorf("MCP error %d: %s", r.Error.Code, r.Error.Message)
	}
	return r.Result, nil
}

func rpcRequest(id int64, method string, params any) ([]byte, error) {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != 0 {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	return json.Marshal(m)
}

// httpMCP is a streamable HTTP session at /mcp with the agent's token, on
// a client of its own (its own connections, from its source address).
type httpMCP struct {
	url, token string
	client     *http.Client
	nextID     atomic.Int64
	mu         sync.Mutex
	session    string
}

func newHTTPMCP(httpAddr, token string, source net.IP) *httpMCP {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: source}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4, IdleConnTimeout: 5 * time.Minute}
	return &httpMCP{url: "http://" + httpAddr + "/mcp", token: token, client: &http.Client{Transport: tr}}
}

var errNoSession = errors.New("the MCP session is gone")

func (h *httpMCP) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	h.mu.Lock()
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
		req.Header.Set("Mcp-Protocol-Version", mcpProtocol)
	}
	h.mu.Unlock()
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errNoSession
	}
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("POST /mcp: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return resp, nil
}

func (h *httpMCP) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	body, err := rpcRequest(h.nextID.Add(1), method, params)
	if err != nil {
		return nil, err
	}
	resp, err := h.post(ctx, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		h.mu.Lock()
		h.session = id
		h.mu.Unlock()
	}
	var r rpcResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&r); err != nil {
		return nil, fmt.Errorf("read the MCP answer: %w", err)
	}
	return r.outcome()
}

func (h *httpMCP) notify(ctx context.Context, method string) error {
	body, err := rpcRequest(0, method, nil)
	if err != nil {
		return err
	}
	resp, err := h.post(ctx, body)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// reset forgets the session (it is opened again by the next initialize).
func (h *httpMCP) reset() {
	h.mu.Lock()
	h.session = ""
	h.mu.Unlock()
	h.client.CloseIdleConnections()
}

// stdioMCP is a `hub mcp` process speaking for one agent.
type stdioMCP struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	wmu    sync.Mutex
	nextID atomic.Int64
	mu     sync.Mutex
	calls  map[int64]chan rpcResponse
	exited chan struct{}
	err    error // why the reader stopped, set before exited closes
}

// startStdioMCP runs `bin mcp` for the agent of token against grpcAddr.
// The process ends when ctx ends (or with close).
func startStdioMCP(ctx context.Context, bin, grpcAddr, token string, bridges *sync.WaitGroup) (*stdioMCP, error) {
	cmd := exec.CommandContext(ctx, bin, "mcp", "--addr", grpcAddr, "--no-channel")
	cmd.Env = append(os.Environ(), "HUB_TOKEN="+token)
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start hub mcp: %w", err)
	}
	s := &stdioMCP{cmd: cmd, stdin: stdin, calls: map[int64]chan rpcResponse{}, exited: make(chan struct{})}
	bridges.Add(1)
	go func() {
		defer bridges.Done()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			var r rpcResponse
			if json.Unmarshal(sc.Bytes(), &r) != nil || r.ID == 0 {
				continue // notifications (progress, logs)
			}
			s.mu.Lock()
			ch := s.calls[r.ID]
			delete(s.calls, r.ID)
			s.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
		s.err = fmt.Errorf("hub mcp stopped: %v", errors.Join(sc.Err(), cmd.Wait()))
		close(s.exited)
	}()
	return s, nil
}

func (s *stdioMCP) write(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.stdin.Write(append(b, '\n'))
	return err
}

func (s *stdioMCP) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := s.nextID.Add(1)
	body, err := rpcRequest(id, method, params)
	if err != nil {
		return nil, err
	}
	ch := make(chan rpcResponse, 1)
	s.mu.Lock()
	s.calls[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.calls, id)
		s.mu.Unlock()
	}()
	if err := s.write(body); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.outcome()
	case <-s.exited:
		return nil, s.err
	case <-ctx.Done():
		// Tell the bridge, as a client does, so that a parked wait ends.
		if b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": id}}); err == nil {
			s.write(b)
		}
		return nil, ctx.Err()
	}
}

func (s *stdioMCP) notify(_ context.Context, method string) error {
	body, err := rpcRequest(0, method, nil)
	if err != nil {
		return err
	}
	return s.write(body)
}

// mcpAgent is the agent API as MCP tools, over either caller.
type mcpAgent struct {
	rpc         rpcCaller
	reset       func() // forget the session, if the transport has one
	ready       atomic.Bool
	initialized bool // the session was initialized (connect, on the agent's goroutine)
}

// connect initializes the session. Over a transport without sessions to
// forget (a hub mcp process), an agent back from an offline spell finds
// its session still open, as a host's idle MCP process keeps it.
func (m *mcpAgent) connect(ctx context.Context) error {
	if m.initialized && m.reset == nil {
		m.ready.Store(true)
		return nil
	}
	_, err := m.rpc.call(ctx, "initialize", map[string]any{
		"protocolVersion": mcpProtocol, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "hubbench-fleet", "version": "1"},
	})
	if err != nil {
		return fmt.Errorf("MCP initialize: %w", err)
	}
	if err := m.rpc.notify(ctx, "notifications/initialized"); err != nil {
		return err
	}
	m.ready.Store(true)
	m.initialized = true
	return nil
}

func (m *mcpAgent) close() {
	m.ready.Store(false)
	if m.reset != nil {
		m.reset()
	}
}

// tool calls an MCP tool and decodes its structured content into out.
func (m *mcpAgent) tool(ctx context.Context, name string, args map[string]any, out any) error {
	if !m.ready.Load() {
		return errors.New("the MCP session is not open")
	}
	raw, err := m.rpc.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if errors.Is(err, errNoSession) {
		// The hub closed an idle session: open another, as clients do.
		m.close()
		if err = m.connect(ctx); err == nil {
			raw, err = m.rpc.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
		}
	}
	if err != nil {
		return err
	}
	var r struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if r.IsError {
		text := ""
		if len(r.Content) > 0 {
			text = r.Content[0].Text
		}
		return fmt.Errorf("%s: %s", name, text)
	}
	if out != nil && len(r.StructuredContent) > 0 {
		return json.Unmarshal(r.StructuredContent, out)
	}
	return nil
}

func (m *mcpAgent) heartbeat(ctx context.Context) error {
	return m.tool(ctx, "heartbeat", map[string]any{}, nil)
}

func (m *mcpAgent) activityLog(ctx context.Context, typ, title string) error {
	return m.tool(ctx, "create_activity_log", map[string]any{"type": typ, "title": title, "content": "notes on " + title}, nil)
}

func (m *mcpAgent) checkpoint(ctx context.Context, text string) error {
	return m.tool(ctx, "checkpoint", map[string]any{"current_activity": text}, nil)
}

func (m *mcpAgent) startDeepWork(ctx context.Context, mode, text string, minutes int) error {
	args := map[string]any{"mode": mode, "planned_activity": text}
	if minutes > 0 {
		args["planned_minutes"] = minutes
	}
	return m.tool(ctx, "start_deep_work", args, nil)
}

func (m *mcpAgent) post(ctx context.Context, to []string, channel, body string) (string, error) {
	args := map[string]any{"body": body}
	if len(to) > 0 {
		args["to"] = to
	}
	if channel != "" {
		args["channel"] = channel
	}
	var out struct {
		ID string `json:"id"`
	}
	err := m.tool(ctx, "post_message", args, &out)
	return out.ID, err
}

func (m *mcpAgent) wait(ctx context.Context, after string) (waitReply, error) {
	args := map[string]any{}
	if after != "" {
		args["after"] = after
	}
	var out struct {
		TimedOut bool   `json:"timed_out"`
		Cursor   string `json:"cursor"`
		Messages []struct {
			ID string `json:"id"`
		} `json:"messages"`
	}
	if err := m.tool(ctx, "wait_for_messages", args, &out); err != nil {
		return waitReply{}, err
	}
	w := waitReply{cursor: out.Cursor, timedOut: out.TimedOut}
	for _, msg := range out.Messages {
		w.ids = append(w.ids, msg.ID)
	}
	return w, nil
}

func (m *mcpAgent) markRead(ctx context.Context, upTo string) error {
	return m.tool(ctx, "mark_read", map[string]any{"up_to_id": upTo}, nil)
}
