package mcpbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one incoming message, as the go-sdk's stdio transport
// does (mcp.DefaultMaxLineLength).
const maxLine = mcp.DefaultMaxLineLength

// batchlessVersion is the first MCP protocol version without JSON-RPC
// batches: once a session has negotiated it or a later one, a batch is
// refused.
const batchlessVersion = "2025-06-18"

// lineTransport is MCP's stdio transport: one JSON-RPC message (or batch)
// per line, read from r and written to w. It does what the go-sdk's
// StdioTransport does, but decodes each line once, with encoding/json: the
// SDK's decodes it three times, each with a fresh 32 KiB buffer, which was
// most of the garbage a bridge made per call. A line that is not JSON, or
// not a JSON-RPC message, is answered with a JSON-RPC error (parse error,
// invalid request) and the session goes on. r is closed with the
// connection; w is not.
type lineTransport struct {
	r io.ReadCloser
	w io.Writer
}

// Connect implements mcp.Transport.
func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{r: t.r, w: t.w, lines: make(chan lineOrErr), closed: make(chan struct{})}
	// Lines are read on their own goroutine so that Close ends a Read at
	// once even when r cannot be interrupted (a terminal, a blocking pipe).
	go c.readLines()
	return c, nil
}

type lineOrErr struct {
	line []byte
	err  error
}

// lineConn is a lineTransport's connection.
type lineConn struct {
	r      io.ReadCloser
	lines  chan lineOrErr
	queue  []jsonrpc.Message // the rest of a batch; Read is not concurrent
	closed chan struct{}
	once   sync.Once

	wmu sync.Mutex // one Write at a time, and guards what follows
	w   io.Writer
	// batches maps the calls of incoming batches to their batch, whose
	// responses go out together once all are in.
	batches map[jsonrpc.ID]*lineBatch
	initID  jsonrpc.ID // the initialize call, whose response names the version
	version string     // the negotiated protocol version
}

// lineBatch collects the responses to one incoming batch's calls.
type lineBatch struct {
	pending   int
	responses []*jsonrpc.Response
	index     map[jsonrpc.ID]int
}

func (c *lineConn) readLines() {
	br := bufio.NewReaderSize(c.r, 64<<10)
	var long []byte // a line longer than br's buffer, put together
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if long = append(long, frag...); len(long) > maxLine {
				c.send(lineOrErr{err: fmt.Errorf("a message is longer than %d bytes: the MCP session ends", maxLine)})
				return
			}
			continue
		}
		line := frag
		if long != nil {
			line = append(long, frag...)
			long = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			// ReadSlice's bytes are overwritten by the next read.
			line = bytes.Clone(line)
			if !c.send(lineOrErr{line: line}) {
				return
			}
		}
		if err != nil {
			c.send(lineOrErr{err: err})
			return
		}
	}
}

func (c *lineConn) send(l lineOrErr) bool {
	select {
	case c.lines <- l:
		return true
	case <-c.closed:
		return false
	}
}

// Read implements mcp.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			return m, nil
		}
		var l lineOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case l = <-c.lines:
		}
		if l.err != nil {
			return nil, l.err
		}
		msgs, err := c.decode(l.line)
		if err != nil {
			if err := c.writeError(ctx, err); err != nil {
				return nil, err
			}
			continue
		}
		c.queue = msgs
	}
}

// lineError is a line that cannot be served, answered with a JSON-RPC error.
type lineError struct {
	code int64
	msg  string
}

func (e *lineError) Error() string { return e.msg }

// decode returns the messages of one line: one, or a batch's.
func (c *lineConn) decode(line []byte) ([]jsonrpc.Message, error) {
	if line[0] != '[' {
		m, err := decodeMessage(line)
		if err != nil {
			return nil, err
		}
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == "initialize" && r.ID.IsValid() {
			c.wmu.Lock()
			c.initID = r.ID
			c.wmu.Unlock()
		}
		return []jsonrpc.Message{m}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, &lineError{jsonrpc.CodeParseError, fmt.Sprintf("parse error: %v", err)}
	}
	if len(raws) == 0 {
		return nil, &lineError{jsonrpc.CodeInvalidRequest, "invalid request: an empty batch"}
	}
	msgs := make([]jsonrpc.Message, len(raws))
	b := &lineBatch{index: map[jsonrpc.ID]int{}}
	for i, raw := range raws {
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, err
		}
		msgs[i] = m
		if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
			if _, dup := b.index[r.ID]; dup {
				return nil, &lineError{jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the batch has two calls with ID %v", r.ID.Raw())}
			}
			b.index[r.ID] = len(b.responses)
			b.responses = append(b.responses, nil)
		}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.version >= batchlessVersion {
		return nil, &lineError{jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: JSON-RPC batches are not part of MCP %s and later (this session uses %s): send one message per line", batchlessVersion, c.version)}
	}
	for id := range b.index {
		if _, ok := c.batches[id]; ok {
			return nil, &lineError{jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a call with ID %v is already in progress", id.Raw())}
		}
	}
	if b.pending = len(b.index); b.pending > 0 && c.batches == nil {
		c.batches = map[jsonrpc.ID]*lineBatch{}
	}
	for id := range b.index {
		c.batches[id] = b
	}
	return msgs, nil
}

// wireMessage is any JSON-RPC 2.0 message as it is read.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// decodeMessage decodes one JSON-RPC message as the go-sdk does: a request
// or notification when it has a method, a response otherwise.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, &lineError{jsonrpc.CodeParseError, fmt.Sprintf("parse error: %v", err)}
	}
	if w.Version != "2.0" {
		return nil, &lineError{jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: \"jsonrpc\" is %q; expected \"2.0\"", w.Version)}
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, &lineError{jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: an ID is a number or a string, got %s", idJSON(w.ID))}
	}
	if w.Method != nil {
		return &jsonrpc.Request{ID: id, Method: *w.Method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, &lineError{jsonrpc.CodeInvalidRequest, "invalid request: a message without \"method\" is a response and needs an \"id\""}
	}
	r := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		r.Error = w.Error
	}
	return r, nil
}

func idJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// writeError answers a line that could not be served. The ID is null: a
// line that is not a valid message has none to answer to.
func (c *lineConn) writeError(ctx context.Context, err error) error {
	var le *lineError
	if !errors.As(err, &le) {
		return err
	}
	data, _ := json.Marshal(struct {
		Version string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, &jsonrpc.Error{Code: le.code, Message: le.msg}})
	return c.writeLine(ctx, data)
}

// Write implements mcp.Connection.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Response); ok {
		batch, done := c.response(r)
		switch {
		case batch != nil && !done:
			return nil
		case batch != nil:
			data := []byte{'['}
			for i, r := range batch.responses {
				raw, err := jsonrpc.EncodeMessage(r)
				if err != nil {
					return fmt.Errorf("encoding a batch's response: %w", err)
				}
				if i > 0 {
					data = append(data, ',')
				}
				data = append(data, raw...)
			}
			return c.writeLine(ctx, append(data, ']'))
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	return c.writeLine(ctx, data)
}

// response records r: it notes the protocol version from the response to
// initialize, and when r answers a call of a batch it returns the batch
// and whether it is complete.
func (c *lineConn) response(r *jsonrpc.Response) (*lineBatch, bool) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.initID.IsValid() && r.ID == c.initID {
		c.initID = jsonrpc.ID{}
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if r.Error == nil && json.Unmarshal(r.Result, &res) == nil {
			c.version = res.ProtocolVersion
		}
	}
	b := c.batches[r.ID]
	if b == nil {
		return nil, false
	}
	delete(c.batches, r.ID)
	b.responses[b.index[r.ID]] = r
	b.pending--
	return b, b.pending == 0
}

// writeLine writes data and a newline in one write.
func (c *lineConn) writeLine(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data = append(data, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(data)
	return err
}

// Close implements mcp.Connection.
func (c *lineConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		err = c.r.Close()
	})
	return err
}

// SessionID implements mcp.Connection: stdio has no session ID.
func (c *lineConn) SessionID() string { return "" }
