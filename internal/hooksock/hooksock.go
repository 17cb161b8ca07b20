// Package hooksock is the local socket through which the hook runs of an
// agent (hub hook) ask the MCP bridge of the same agent on the same machine
// (hub mcp) before they ask the hub: a hook run with nothing new is then
// answered by the bridge, which follows the agent's messages at the hub
// anyway, and costs the hub nothing.
//
// The socket is a Unix socket, never a TCP port: mode 0600 in a directory of
// mode 0700 owned by the user ($XDG_RUNTIME_DIR/agent-hub, else
// $TMPDIR/agent-hub-UID), named after a hash of the hub's address and the
// agent's token, so the hook of that agent finds it and no other agent's
// does. Both ends check the other's user (SO_PEERCRED where the system has
// it), and the hook presents the agent's token, which the bridge compares
// with its own.
//
// One exchange per connection, each a line of JSON: the hook's Query, the
// bridge's Reply; after a Reply that sends it to the hub, the hook writes
// one more line once the hub has answered it (Session.Synced), which is how
// the bridge learns that the hub has seen the hook.
//
// A hook that can print the bridge's answer says so in its Query (print,
// with its host): for a prompt or a tool use with something new, the bridge
// then takes the injection from the hub itself, as a call on the stream it
// holds (no connection or process of the hook's own), and answers
// AnswerPrint with the hook's whole output (what `hub hook` would print for
// that host and event) and exit status; the hook prints it, exits, and
// writes the same Synced line once printed, upon which the bridge confirms
// the messages shown (IN_CONTEXT via hook). Such a hook waits up to
// PrintWait for the answer. A hook that does not say so (an older one)
// gets AnswerQuiet or AnswerHub only, and an older bridge ignores print and
// answers those too.
//
// A hook that gives its host event (Query.Note, read from the host's
// input) lets the bridge report it too, on the same stream: a notification
// that the agent waits for a person is then answered AnswerPrint, and so
// is the prompt or tool use after an event of the host, which the bridge
// reports (the agent works again) before it takes the injection. An older
// bridge ignores the note and answers AnswerHub: the hook asks the hub.
// So does a stop (Query.Stop) and a session's end (Query.End): the bridge
// asks the hub what the hook would (CheckStop, then NoteHostEvent when the
// stop is let go; NoteHostEvent and EndSession) and answers AnswerPrint
// with the hook's output; a bridge older than these fields answers
// AnswerHub.
//
// A permission request (Query.Approval: the tool, its input, the call's
// key, the host's suggested rule and how long to wait for a person) is
// asked the same way: the bridge makes the hook's RequestApproval on its
// stream and answers AnswerPrint with the hook's output for the person's
// decision, or its quiet answer when nobody answered in time. Such a hook
// waits for the answer as long as it waits for a person, and a margin
// more. The bridge's call lasts while the hook's connection is open: a
// hook that ends (killed by its host, or given up) ends it, and the
// approval is left to the terminal.
package hooksock

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ConnectTimeout bounds a hook's connect to the bridge and its answer: a
// bridge slower than this is no bridge, and the hook asks the hub.
const ConnectTimeout = 30 * time.Millisecond

// PrintWait bounds how long a hook that takes AnswerPrint waits for the
// bridge's answer once connected: the bridge takes the injection from the
// hub in that time, else it sends the hook to the hub.
const PrintWait = time.Second

// syncedWait bounds how long the bridge waits for a hook it sent to the
// hub to say that the hub answered (the hook's own time-outs are shorter).
const syncedWait = 5 * time.Second

// maxLine bounds one line of the exchange, but the bridge's reply and a
// query with an approval.
const maxLine = 4 << 10

// maxQuery bounds a query with an approval: it carries the tool's input,
// which the hub takes up to 64 KiB, escaped in a JSON string (up to six
// bytes a byte).
const maxQuery = 1 << 20

// maxReply bounds the bridge's reply line: a printed answer carries up to
// an injection's messages.
const maxReply = 4 << 20

// The steps a hook asks about.
const (
	// StepInject: a prompt or a tool use; what is new since the last injection.
	StepInject = "inject"
	// StepOther: any other event the hook takes to the hub (session start,
	// stop, permission request, notification, session end), which the
	// bridge answers only with a note, a stop, an end or an approval the
	// hook gives.
	StepOther = "other"
)

// The answers of the bridge.
const (
	// AnswerQuiet: nothing is new; the hook prints its quiet answer and exits.
	AnswerQuiet = "quiet"
	// AnswerHub: the hook asks the hub, as it would without a bridge.
	AnswerHub = "hub"
	// AnswerPrint: the bridge asked the hub; the hook prints Reply.Output,
	// writes Synced and exits with Reply.Exit. Only to a Query with Print.
	AnswerPrint = "print"
)

// Query is what a hook run asks its bridge.
type Query struct {
	Token string `json:"token"`
	Step  string `json:"step"`
	Event string `json:"event"`
	// Print: the hook takes AnswerPrint, for Host (claude, codex, gemini).
	Print bool   `json:"print,omitempty"`
	Host  string `json:"host,omitempty"`
	// Note is what the hook run reports of the agent's state to the hub
	// (NoteHostEvent) before anything else, from the host's input: a
	// notification that the agent waits for a person, a prompt or a tool
	// use (the agent works again). With Print, the bridge may report it
	// and answer the run.
	Note *Note `json:"note,omitempty"`
	// Stop is a stop's question to the hub (CheckStop), from the host's
	// input; End says the host's session ended (NoteHostEvent
	// session_end, then EndSession). With Print, the bridge may ask the
	// hub and answer the run.
	Stop *Stop `json:"stop,omitempty"`
	End  bool  `json:"end,omitempty"`
	// Approval is a permission request's RequestApproval, from the host's
	// input. With Print, the bridge may ask the hub and answer the run
	// with the person's decision.
	Approval *Approval `json:"approval,omitempty"`
}

// Approval is a permission request hook run's RequestApproval: the host's
// tool and its input as the host gave it (JSON), the call's key, the
// host's suggested rule, and how long to wait for a person.
type Approval struct {
	Tool          string `json:"tool"`
	Input         string `json:"input,omitempty"`
	CallKey       string `json:"call_key,omitempty"`
	SuggestedRule string `json:"suggested_rule,omitempty"`
	WaitSeconds   int    `json:"wait_seconds"`
}

// Stop is a stop hook run's CheckStop: whether the host goes on after a
// stop this hook held (the host's stop_hook_active).
type Stop struct {
	Continuing bool `json:"continuing,omitempty"`
}

// Note is a hook run's NoteHostEvent: the hub's host event (needs_input,
// active, tool_ran), its text and the tool call's key.
type Note struct {
	Event   string `json:"event"`
	Text    string `json:"text,omitempty"`
	CallKey string `json:"call_key,omitempty"`
}

// Reply is the bridge's answer; Why says, for AnswerHub, what the bridge
// is not sure of. Output and Exit are AnswerPrint's: what the hook prints
// on stdout, as it is, and its exit status.
type Reply struct {
	Answer string `json:"answer"`
	Why    string `json:"why,omitempty"`
	Output string `json:"output,omitempty"`
	Exit   int    `json:"exit,omitempty"`
}

// synced is the line a hook writes once the hub has answered it.
const syncedLine = `{"synced":true}`

// Dir returns the directory of the sockets: $XDG_RUNTIME_DIR/agent-hub when
// the variable is set, else agent-hub-UID in the system's temporary
// directory.
func Dir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "agent-hub")
	}
	return filepath.Join(os.TempDir(), "agent-hub-"+strconv.Itoa(os.Getuid()))
}

// Path returns the socket of the bridge of the agent of token at the hub
// at addr.
func Path(addr, token string) string {
	sum := sha256.Sum256([]byte("agent-hub hook socket\n" + addr + "\n" + token))
	return filepath.Join(Dir(), hex.EncodeToString(sum[:10])+".sock")
}

// checkDir returns an error unless dir is a directory (not a link) of the
// user with no access for others.
func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to user %d, not to this user (%d)", dir, uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s has mode %v; want 0700 (only this user)", dir, fi.Mode().Perm())
	}
	return nil
}

// Listen opens the socket at path for the bridge: it makes the directory
// (0700) if needed and refuses one that others can reach, removes a socket
// file left by a bridge that is gone, and refuses a path where a live
// bridge listens (another session of the same agent). The socket is 0600;
// closing the listener removes it.
func Listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("make the hooks' socket directory: %w", err)
	}
	if err := checkDir(dir); err != nil {
		return nil, fmt.Errorf("the hooks' socket directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket; remove it", path)
		}
		if c, err := net.DialTimeout("unix", path, ConnectTimeout); err == nil {
			c.Close()
			return nil, fmt.Errorf("another bridge of this agent answers at %s", path)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove the socket of a bridge that is gone: %w", err)
		}
	}
	// Until the chmod the socket has the mode the process's mask gives,
	// in a directory no other user can enter.
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// Serve answers the hook runs that connect to ln until ln is closed. A
// connection from another user, or whose token is not token, is closed
// unanswered. answer gives the reply and, for a hook sent to the hub, what
// to run once the hook says the hub answered it (nil: nothing); its
// context ends when the hook's connection closes first (the hook is gone).
func Serve(ln net.Listener, token string, answer func(context.Context, Query) (Reply, func()), logger *slog.Logger) {
	want := sha256.Sum256([]byte(token))
	for {
		c, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				logger.Warn("hooks: the socket stopped accepting; hooks ask the hub", "err", err)
			}
			return
		}
		go serveOne(c, want, answer, logger)
	}
}

func serveOne(c net.Conn, want [32]byte, answer func(context.Context, Query) (Reply, func()), logger *slog.Logger) {
	defer c.Close()
	if uid, ok := peerUID(c); ok && uid != os.Getuid() {
		logger.Warn("hooks: a process of another user connected; refused", "uid", uid)
		return
	}
	_ = c.SetDeadline(time.Now().Add(ConnectTimeout * 10))
	r := bufio.NewReaderSize(c, maxLine)
	line, err := readQuery(r)
	if err != nil {
		return
	}
	var q Query
	if err := json.Unmarshal(line, &q); err != nil {
		logger.Debug("hooks: a query that is not JSON; refused", "err", err)
		return
	}
	got := sha256.Sum256([]byte(q.Token))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		logger.Warn("hooks: a hook presented another token; refused")
		return
	}
	rep, synced := answerWhileOpen(c, r, q, answer) // with Print, it may ask the hub
	_ = c.SetDeadline(time.Now().Add(ConnectTimeout * 10))
	b, _ := json.Marshal(rep)
	if _, err := c.Write(append(b, '\n')); err != nil || synced == nil {
		return
	}
	_ = c.SetDeadline(time.Now().Add(syncedWait))
	if line, err := r.ReadSlice('\n'); err == nil && string(line[:len(line)-1]) == syncedLine {
		synced()
	}
}

// readQuery reads a hook's query from r: a line of up to maxLine bytes, or
// of up to maxQuery for one that carries an approval.
func readQuery(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	long := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxQuery {
		line, err = r.ReadSlice('\n')
		long = append(long, line...)
	}
	if err != nil {
		return nil, err
	}
	if len(long) > maxQuery {
		return nil, fmt.Errorf("a query of over %d bytes", maxQuery)
	}
	return long, nil
}

// answerWhileOpen runs answer for q with a context that ends when the
// hook's connection c closes (read through r, which it leaves as it was:
// what the hook writes next, its Synced line, is read after).
func answerWhileOpen(c net.Conn, r *bufio.Reader, q Query, answer func(context.Context, Query) (Reply, func())) (Reply, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = c.SetReadDeadline(time.Time{}) // the answer may wait for a person
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		// The hook writes nothing before the reply: the peek ends when its
		// connection closes, or when the answer is done (the deadline below).
		if _, err := r.Peek(1); err != nil {
			cancel()
		}
	}()
	rep, synced := answer(ctx, q)
	_ = c.SetReadDeadline(time.Now())
	<-watched
	return rep, synced
}

// Session is a hook's open exchange with its bridge.
type Session struct{ c net.Conn }

// ErrNoBridge is Ask's error when no bridge of the agent answers.
var ErrNoBridge = errors.New("no bridge of this agent answers on this machine")

// Ask asks the bridge at path until ctx ends (a hook gives it
// ConnectTimeout, and PrintWait more with Print). It returns ErrNoBridge
// (wrapped) when no bridge answers, the socket's directory or its peer is
// not this user's alone, or the bridge refused the token. The caller
// closes the session, after Synced when the reply sent it to the hub and
// the hub answered, or when it printed an AnswerPrint.
func Ask(ctx context.Context, path string, q Query) (Reply, *Session, error) {
	if err := checkDir(filepath.Dir(path)); err != nil {
		return Reply{}, nil, fmt.Errorf("%w: %v", ErrNoBridge, err)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return Reply{}, nil, fmt.Errorf("%w: %v", ErrNoBridge, err)
	}
	fail := func(err error) (Reply, *Session, error) {
		c.Close()
		return Reply{}, nil, fmt.Errorf("%w: %v", ErrNoBridge, err)
	}
	if uid, ok := peerUID(c); ok && uid != os.Getuid() {
		return fail(fmt.Errorf("the socket %s is served by user %d", path, uid))
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	// A hook that gives up closes the connection: the bridge's calls for
	// it end.
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	b, _ := json.Marshal(q)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return fail(err)
	}
	line, err := bufio.NewReader(io.LimitReader(c, maxReply)).ReadBytes('\n')
	if err != nil {
		return fail(err)
	}
	var rep Reply
	if err := json.Unmarshal(line, &rep); err != nil {
		return fail(err)
	}
	if rep.Answer != AnswerQuiet && rep.Answer != AnswerHub && (rep.Answer != AnswerPrint || !q.Print) {
		return fail(fmt.Errorf("unknown answer %q", rep.Answer))
	}
	_ = c.SetDeadline(time.Time{})
	return rep, &Session{c: c}, nil
}

// Synced tells the bridge that the hub answered the hook it sent there, or
// that the hook printed the bridge's AnswerPrint.
func (s *Session) Synced() {
	_ = s.c.SetWriteDeadline(time.Now().Add(ConnectTimeout))
	_, _ = s.c.Write([]byte(syncedLine + "\n"))
}

// Close ends the exchange.
func (s *Session) Close() { s.c.Close() }
