// Package model is a scripted stand-in for the model APIs the agent hosts
// call: Anthropic's Messages API (Claude Code), OpenAI's Responses API
// (Codex) and the Gemini API (Gemini CLI), each streamed the way the real
// API streams. A request that offers tools gets the next step of the
// script (a tool call or a final text); a request without tools (a host's
// side call: a title, a summary) gets a short text and leaves the script
// where it is. Every request is recorded, so a test can assert on what
// reached the model.
package model

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Step is one answer of the script: a tool call (Tool set) or a final text.
type Step struct {
	Tool  string         // the tool to call, as the host names it
	Input map[string]any // the call's arguments
	Text  string         // the final text (no tool)
	// Before runs when the request this step answers arrives, before the
	// answer is written (say, a message posted between two tool calls).
	Before func(r Request)
}

// Call is a step that calls tool with input.
func Call(tool string, input map[string]any) Step { return Step{Tool: tool, Input: input} }

// Say is a step that ends the turn with text.
func Say(text string) Step { return Step{Text: text} }

// Request is one request the model received.
type Request struct {
	API      string // anthropic, openai or gemini
	Path     string
	Body     string // the raw JSON body
	Scripted bool   // it offered tools and got a step of the script
	Step     int    // the step it got (when Scripted)
	At       time.Time
}

// Server is the scripted model on a loopback port.
type Server struct {
	URL string
	l   net.Listener
	srv *http.Server

	mu       sync.Mutex
	script   []Step
	next     int
	requests []Request
	calls    int
}

// Start serves the model on 127.0.0.1 at a free port.
func Start() (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + l.Addr().String(), l: l}
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.serve)
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(l)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Script sets the steps the next scripted requests get and forgets the
// requests recorded so far.
func (s *Server) Script(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.next, s.requests = steps, 0, nil
}

// Requests returns the requests received since the last Script.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Scripted returns the requests that got a step of the script, in order.
func (s *Server) Scripted() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Scripted {
			out = append(out, r)
		}
	}
	return out
}

// Done reports how many steps of the script were handed out.
func (s *Server) Done() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	api := ""
	switch {
	case strings.HasSuffix(r.URL.Path, "/messages"):
		api = "anthropic"
	case strings.HasSuffix(r.URL.Path, "/responses"):
		api = "openai"
	case strings.Contains(r.URL.Path, ":streamGenerateContent"), strings.Contains(r.URL.Path, ":generateContent"):
		api = "gemini"
	case strings.HasSuffix(r.URL.Path, "/models"), strings.Contains(r.URL.Path, "/models/"):
		// a model listing or lookup: an empty list
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[],"models":[]}`)
		s.record(Request{API: "other", Path: r.URL.Path, Body: string(body)})
		return
	default:
		s.record(Request{API: "other", Path: r.URL.Path, Body: string(body)})
		http.NotFound(w, r)
		return
	}
	req := Request{API: api, Path: r.URL.Path, Body: string(body), At: time.Now()}
	var probe struct {
		Tools  []json.RawMessage `json:"tools"`
		Stream *bool             `json:"stream"`
	}
	_ = json.Unmarshal(body, &probe)
	step := Step{Text: "ok"}
	if len(probe.Tools) > 0 {
		s.mu.Lock()
		req.Scripted, req.Step = true, s.next
		if s.next < len(s.script) {
			step = s.script[s.next]
			s.next++
		} else {
			step = Say("done")
		}
		s.mu.Unlock()
	}
	if step.Before != nil {
		step.Before(req)
	}
	s.record(req)
	s.mu.Lock()
	s.calls++
	id := fmt.Sprintf("%d", s.calls)
	s.mu.Unlock()
	stream := probe.Stream == nil || *probe.Stream
	switch api {
	case "anthropic":
		anthropic(w, step, id, stream)
	case "openai":
		openai(w, step, id)
	case "gemini":
		gemini(w, step, strings.Contains(r.URL.Path, ":streamGenerateContent"))
	}
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

// sse writes one Server-Sent Event (event "" writes data only).
func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func inputJSON(step Step) string {
	in := step.Input
	if in == nil {
		in = map[string]any{}
	}
	b, _ := json.Marshal(in)
	return string(b)
}

type obj = map[string]any

// What every answer reports of its usage, in each API's own terms, so
// that a test can tell what a host must report of a run: Input tokens not
// read from the cache, Cached tokens read from it, CacheWrite tokens
// written to it (Anthropic's API alone reports them), Output tokens and,
// of those, Reasoning ones (OpenAI counts them inside its output tokens,
// Gemini beside its candidates' tokens).
const (
	Input      = 10
	Cached     = 4
	CacheWrite = 2
	Output     = 5
	Reasoning  = 1
)

// anthropic answers a Messages API request.
func anthropic(w http.ResponseWriter, step Step, id string, stream bool) {
	usage := obj{"input_tokens": Input, "output_tokens": Output, "cache_creation_input_tokens": CacheWrite, "cache_read_input_tokens": Cached}
	var block obj
	stop := "end_turn"
	if step.Tool != "" {
		block = obj{"type": "tool_use", "id": "toolu_" + id, "name": step.Tool, "input": step.Input}
		stop = "tool_use"
	} else {
		block = obj{"type": "text", "text": step.Text}
	}
	msg := obj{"id": "msg_" + id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}
	if !stream {
		msg["content"], msg["stop_reason"] = []any{block}, stop
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	sse(w, "message_start", obj{"type": "message_start", "message": msg})
	if step.Tool != "" {
		sse(w, "content_block_start", obj{"type": "content_block_start", "index": 0,
			"content_block": obj{"type": "tool_use", "id": "toolu_" + id, "name": step.Tool, "input": obj{}}})
		sse(w, "content_block_delta", obj{"type": "content_block_delta", "index": 0,
			"delta": obj{"type": "input_json_delta", "partial_json": inputJSON(step)}})
	} else {
		sse(w, "content_block_start", obj{"type": "content_block_start", "index": 0, "content_block": obj{"type": "text", "text": ""}})
		sse(w, "content_block_delta", obj{"type": "content_block_delta", "index": 0, "delta": obj{"type": "text_delta", "text": step.Text}})
	}
	sse(w, "content_block_stop", obj{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": obj{"output_tokens": Output}})
	sse(w, "message_stop", obj{"type": "message_stop"})
}

// openai answers a Responses API request (always streamed).
func openai(w http.ResponseWriter, step Step, id string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	resp := obj{"id": "resp_" + id, "object": "response", "status": "in_progress", "model": "gpt-5", "output": []any{}}
	sse(w, "", obj{"type": "response.created", "response": resp})
	var item obj
	if step.Tool != "" {
		item = obj{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": step.Tool, "arguments": inputJSON(step), "status": "completed"}
		// Codex offers an MCP server's tools as a namespace
		// (mcp__SERVER) of plain names.
		if rest, ok := strings.CutPrefix(step.Tool, "mcp__"); ok {
			if server, tool, ok := strings.Cut(rest, "__"); ok {
				item["namespace"], item["name"] = "mcp__"+server, tool
			}
		}
	} else {
		item = obj{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{obj{"type": "output_text", "text": step.Text, "annotations": []any{}}}}
		sse(w, "", obj{"type": "response.output_item.added", "output_index": 0,
			"item": obj{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "in_progress", "content": []any{}}})
		sse(w, "", obj{"type": "response.output_text.delta", "item_id": "msg_" + id, "output_index": 0, "content_index": 0, "delta": step.Text})
	}
	sse(w, "", obj{"type": "response.output_item.done", "output_index": 0, "item": item})
	resp["status"], resp["output"] = "completed", []any{item}
	resp["usage"] = obj{"input_tokens": Input + Cached, "input_tokens_details": obj{"cached_tokens": Cached}, "output_tokens": Output,
		"output_tokens_details": obj{"reasoning_tokens": Reasoning}, "total_tokens": Input + Cached + Output}
	sse(w, "", obj{"type": "response.completed", "response": resp})
}

// gemini answers a generateContent or streamGenerateContent request.
func gemini(w http.ResponseWriter, step Step, stream bool) {
	var part obj
	if step.Tool != "" {
		in := step.Input
		if in == nil {
			in = obj{}
		}
		part = obj{"functionCall": obj{"name": step.Tool, "args": in}}
	} else {
		part = obj{"text": step.Text}
	}
	chunk := obj{
		"candidates": []any{obj{"content": obj{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": obj{"promptTokenCount": Input + Cached, "cachedContentTokenCount": Cached, "candidatesTokenCount": Output,
			"thoughtsTokenCount": Reasoning, "totalTokenCount": Input + Cached + Output + Reasoning},
		"modelVersion": "gemini-2.5-pro",
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(chunk)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "", chunk)
}
