package mcpbridge

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokenlessBridge is the bridge of `hub mcp` started without a token: it
// needs no hub, every tool says how to set the token.
func tokenlessBridge() *bridge {
	return &bridge{opts: Options{}.withDefaults(), callContext: func(context.Context, *mcp.CallToolRequest) (context.Context, error) {
		return nil, ErrNoToken
	}}
}

// rawSession serves the bridge's MCP server (no hub: the tests below need
// none) over lineTransport on pipes, and gives the test the client's end
// as lines.
type rawSession struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Scanner
}

// serveLines serves the tokenless bridge over lineTransport on pipes: the
// client writes to in and reads out. ended is closed when the server has
// returned, with its error in *err.
func serveLines(t *testing.T) (in *io.PipeWriter, out *io.PipeReader, ended <-chan struct{}, err *error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = newServer(tokenlessBridge()).Run(ctx, &lineTransport{r: inR, w: outW})
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
	})
	return inW, outR, done, &runErr
}

func newRawSession(t *testing.T) *rawSession {
	t.Helper()
	in, out, _, _ := serveLines(t)
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	return &rawSession{t: t, in: in, out: sc}
}

func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write %s: %v", line, err)
	}
}

// next returns the next line the server writes.
func (s *rawSession) next() string {
	s.t.Helper()
	if !s.out.Scan() {
		s.t.Fatalf("the server wrote no more lines: %v", s.out.Err())
	}
	return s.out.Text()
}

// initialize opens the session with protocol version v.
func (s *rawSession) initialize(v string) {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v +
		`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	var r struct {
		ID     int `json:"id"`
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	line := s.next()
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.ID != 1 || r.Result.ProtocolVersion != v {
		s.t.Fatalf("initialize answered %s (%v), want protocol version %s", line, err, v)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// wireError is a JSON-RPC error response as it is written.
type wireError struct {
	Error struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestLineTransportAnswersBadLinesAndGoesOn(t *testing.T) {
	s := newRawSession(t)
	tests := []struct {
		line string
		code int64
		want string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":`, jsonrpc.CodeParseError, "parse error"},
		{`ping`, jsonrpc.CodeParseError, "parse error"},
		{`{"jsonrpc":"1.0","id":7,"method":"ping"}`, jsonrpc.CodeInvalidRequest, `"jsonrpc" is "1.0"; expected "2.0"`},
		{`{"jsonrpc":"2.0","id":{"n":7},"method":"ping"}`, jsonrpc.CodeInvalidRequest, `an ID is a number or a string, got {"n":7}`},
		{`{"jsonrpc":"2.0","result":{}}`, jsonrpc.CodeInvalidRequest, `needs an "id"`},
		{`[]`, jsonrpc.CodeInvalidRequest, "an empty batch"},
		{`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, "two calls with ID 2"},
	}
	for _, tt := range tests {
		s.send(tt.line)
		line := s.next()
		var e wireError
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%s: answer %s: %v", tt.line, line, err)
		}
		if !strings.Contains(line, `"id":null`) {
			t.Errorf("%s: answer %s, want \"id\": null", tt.line, line)
		}
		if e.Error.Code != tt.code || !strings.Contains(e.Error.Message, tt.want) {
			t.Errorf("%s: error %d %q, want %d containing %q", tt.line, e.Error.Code, e.Error.Message, tt.code, tt.want)
		}
	}
	// Blank lines and surrounding spaces are not messages; the session
	// still serves.
	s.send("")
	s.initialize("2025-11-25")
	s.send(`  {"jsonrpc":"2.0","id":"p","method":"ping"}  `)
	if got, want := s.next(), `{"jsonrpc":"2.0","id":"p","result":{}}`; got != want {
		t.Errorf("ping answered %s, want %s", got, want)
	}
}

func TestLineTransportBatches(t *testing.T) {
	t.Run("answered together before 2025-06-18", func(t *testing.T) {
		s := newRawSession(t)
		s.initialize("2025-03-26")
		s.send(`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":"four","method":"ping"}]`)
		if got, want := s.next(), `[{"jsonrpc":"2.0","id":3,"result":{}},{"jsonrpc":"2.0","id":"four","result":{}}]`; got != want {
			t.Errorf("batch answered %s, want %s", got, want)
		}
		s.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
		if got, want := s.next(), `{"jsonrpc":"2.0","id":5,"result":{}}`; got != want {
			t.Errorf("ping after the batch answered %s, want %s", got, want)
		}
	})
	t.Run("refused from 2025-06-18", func(t *testing.T) {
		s := newRawSession(t)
		s.initialize("2025-06-18")
		s.send(`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
		var e wireError
		if line := s.next(); json.Unmarshal([]byte(line), &e) != nil || e.Error.Code != jsonrpc.CodeInvalidRequest ||
			!strings.Contains(e.Error.Message, "batches are not part of MCP 2025-06-18 and later") {
			t.Errorf("batch answered %s, want an invalid request error", line)
		}
	})
}

// TestLineTransportServesTheSDKClient runs a whole session, the go-sdk
// client on the other end.
func TestLineTransportServesTheSDKClient(t *testing.T) {
	in, out, ended, runErr := serveLines(t)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: out, Writer: in}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil || len(res.Tools) != len(tools) {
		t.Fatalf("tools/list: %d tools, %v; want %d", len(res.Tools), err, len(tools))
	}
	// Without a token every tool explains how to set one.
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "check_hub_status"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "HUB_TOKEN") {
		t.Errorf("check_hub_status without a token: %+v", r.Content[0])
	}
	cs.Close() // closes the client's writer: the server reads EOF and ends
	select {
	case <-ended:
		if *runErr != nil {
			t.Errorf("the server ended with %v, want nil at EOF", *runErr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end when its input did")
	}
}

// TestLineConnCloseEndsRead checks that Close ends a Read waiting for a
// line that never comes.
func TestLineConnCloseEndsRead(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	c, err := (&lineTransport{r: r, w: io.Discard}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		read <- err
	}()
	c.Close()
	select {
	case err := <-read:
		if err == nil {
			t.Error("Read after Close returned a message")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the Read")
	}
}
