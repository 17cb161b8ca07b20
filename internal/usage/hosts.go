// Package usage maps the telemetry that agents' hosts export over OTLP
// (Claude Code, Codex, Gemini CLI, and any sender of the standard
// gen_ai.client.token.usage metric) to what the hub keeps of their spend
// (hub.UsageDelta), and resolves, per agent, what a metric series or a
// session reported before: cumulative series become differences, a resent
// export is not counted twice, and in a session that sends events the
// events count and its metrics do not (the Meter).
//
// The names and attributes of each host are in this file; where each
// shape comes from is in testdata/README.md.
package usage

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/agenthub/hub/internal/hub"
	common "go.opentelemetry.io/proto/otlp/common/v1"
)

// attrs are a record's attributes over its resource's, by key.
type attrs map[string]*common.AnyValue

// merge returns the attributes of kvs over base.
func merge(base attrs, kvs []*common.KeyValue) attrs {
	a := make(attrs, len(base)+len(kvs))
	for k, v := range base {
		a[k] = v
	}
	for _, kv := range kvs {
		a[kv.GetKey()] = kv.GetValue()
	}
	return a
}

// str returns attribute k as a string ("" when absent); a number reads as
// written.
func (a attrs) str(k string) string {
	v := a[k]
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		return x.StringValue
	case *common.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *common.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'f', -1, 64)
	case *common.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	}
	return ""
}

// num returns attribute k as a number: hosts send counts as integers,
// doubles or strings (Claude Code's event attributes are strings). Absent
// or unreadable: 0.
func (a attrs) num(k string) float64 {
	switch x := a[k].GetValue().(type) {
	case *common.AnyValue_IntValue:
		return float64(x.IntValue)
	case *common.AnyValue_DoubleValue:
		return x.DoubleValue
	case *common.AnyValue_StringValue:
		f, err := strconv.ParseFloat(strings.TrimSpace(x.StringValue), 64)
		if err != nil {
			return 0
		}
		return f
	}
	return 0
}

// count is num as a whole non-negative count.
func (a attrs) count(k string) int64 {
	n := int64(a.num(k))
	return max(n, 0)
}

// session is the session (conversation) an attribute set belongs to:
// Claude Code and Gemini CLI say session.id, Codex conversation.id.
func (a attrs) session() string {
	if s := a.str("session.id"); s != "" {
		return s
	}
	return a.str("conversation.id")
}

// model is the model an attribute set names.
func (a attrs) model() string {
	return cmp.Or(a.str("model"), a.str("gen_ai.response.model"), a.str("gen_ai.request.model"))
}

// readKeys are the attributes the hub reads, of a record or of its
// resource: a log record kept on the wire keeps these only (pruneLogs).
// Each is read by a literal key (attrs.str, num, count) in this package,
// and TestReadKeysDeclared finds every such key here.
var readKeys = map[string]bool{
	"service.name": true, "event.name": true, "event.sequence": true, "event.kind": true,
	"session.id": true, "conversation.id": true,
	"model": true, "gen_ai.response.model": true, "gen_ai.request.model": true,
	"type": true, "token_type": true, "gen_ai.token.type": true,
	"input_tokens": true, "output_tokens": true, "cache_read_tokens": true, "cache_creation_tokens": true, "cost_usd": true,
	"input_token_count": true, "output_token_count": true, "cached_token_count": true,
	"cached_content_token_count": true, "tool_token_count": true, "thoughts_token_count": true,
	"status_code": true, "http.response.status_code": true, "error": true, "error.message": true,
	"tool_name": true, "function_name": true,
}

// Hosts' service names (resource attribute service.name) and the prefix
// of their metric and event names.
const (
	serviceClaude = "claude-code"
	serviceGemini = "gemini-cli"
	serviceCodex  = "codex" // codex_cli_rs, codex_exec, codex-app-server...
)

// knownHost reports whether service (service.name) or a metric name is a
// host this package maps by its own names: its standard gen_ai.* metrics
// repeat what its own say and are not counted.
func knownHost(service string) bool {
	return service == serviceClaude || service == serviceGemini || strings.HasPrefix(service, serviceCodex)
}

func knownMetric(name string) bool {
	return strings.HasPrefix(name, "claude_code.") || strings.HasPrefix(name, "gemini_cli.") || strings.HasPrefix(name, "codex.")
}

// eventName is a log record's event name with its host's prefix: its
// event.name attribute (Claude Code sends "api_request" there, its body
// "claude_code.api_request"; Codex "codex.sse_event", its record's
// event_name being the place in its source that logged it), else the
// record's event_name, else a body that is a name.
func eventName(service, recordName string, a attrs, body string) string {
	n := a.str("event.name")
	if n == "" {
		n = recordName
	}
	if n == "" && !strings.ContainsAny(body, " \n") {
		n = body
	}
	if n == "" || strings.Contains(n, ".") {
		return n
	}
	switch {
	case service == serviceClaude:
		return "claude_code." + n
	case service == serviceGemini:
		return "gemini_cli." + n
	case strings.HasPrefix(service, serviceCodex):
		return "codex." + n
	}
	return n
}

// metricPart is what one data point of a token metric adds: which counts,
// by how much per unit of the point's value, and whether the point's count
// (a histogram's) counts requests.
type metricPart struct {
	add          func(c *hub.UsageCounts, v float64)
	requestCount bool
}

func tokens(field func(c *hub.UsageCounts) *int64) func(c *hub.UsageCounts, v float64) {
	return func(c *hub.UsageCounts, v float64) { *field(c) += int64(v) }
}

var (
	toInput         = tokens(func(c *hub.UsageCounts) *int64 { return &c.Input })
	toOutput        = tokens(func(c *hub.UsageCounts) *int64 { return &c.Output })
	toCacheRead     = tokens(func(c *hub.UsageCounts) *int64 { return &c.CacheRead })
	toCacheCreation = tokens(func(c *hub.UsageCounts) *int64 { return &c.CacheCreation })
	toRequests      = tokens(func(c *hub.UsageCounts) *int64 { return &c.Requests })
	toCost          = func(c *hub.UsageCounts, v float64) { c.CostUSD += v }
	// Cached input a host counts inside its input tokens (OpenAI's and
	// Gemini's usage do): out of Input, into the cache's count.
	cachedOfInput  = func(c *hub.UsageCounts, v float64) { c.Input -= int64(v); c.CacheRead += int64(v) }
	writtenOfInput = func(c *hub.UsageCounts, v float64) {
		c.Input -= int64(v)
		c.CacheCreation += int64(v)
	}
)

// metricRule returns how a data point of metric name with attributes a
// counts; ok is false for a point that counts nothing of usage.
func metricRule(name string, a attrs) (p metricPart, ok bool) {
	if rule := metricRules[name]; rule != nil {
		return rule(a)
	}
	return metricPart{}, false
}

// metricRules are the metrics that count usage, by name: how a data point
// with attributes a counts.
var metricRules = map[string]func(a attrs) (metricPart, bool){
	"claude_code.token.usage": func(a attrs) (metricPart, bool) {
		// type: input, output, cacheRead, cacheCreation.
		switch a.str("type") {
		case "input":
			return metricPart{add: toInput}, true
		case "output":
			return metricPart{add: toOutput}, true
		case "cacheRead":
			return metricPart{add: toCacheRead}, true
		case "cacheCreation":
			return metricPart{add: toCacheCreation}, true
		}
		return metricPart{}, false
	},
	"claude_code.cost.usage": func(attrs) (metricPart, bool) { return metricPart{add: toCost}, true },
	"codex.turn.token_usage": func(a attrs) (metricPart, bool) {
		// A histogram per turn; token_type: input (cached included),
		// cached_input, cache_write_input, output (reasoning included),
		// reasoning_output, total.
		switch a.str("token_type") {
		case "input":
			return metricPart{add: toInput, requestCount: true}, true
		case "cached_input":
			return metricPart{add: cachedOfInput}, true
		case "cache_write_input":
			return metricPart{add: writtenOfInput}, true
		case "output":
			return metricPart{add: toOutput}, true
		}
		return metricPart{}, false
	},
	"gemini_cli.token.usage": func(a attrs) (metricPart, bool) {
		// type: input (cached included), output, thought, cache, tool.
		switch a.str("type") {
		case "input", "tool":
			return metricPart{add: toInput}, true
		case "output", "thought":
			return metricPart{add: toOutput}, true
		case "cache":
			return metricPart{add: cachedOfInput}, true
		}
		return metricPart{}, false
	},
	"gemini_cli.api.request.count": func(attrs) (metricPart, bool) { return metricPart{add: toRequests}, true },
	"gen_ai.client.token.usage": func(a attrs) (metricPart, bool) {
		// The OpenTelemetry GenAI convention: a histogram per request,
		// gen_ai.token.type input or output.
		switch a.str("gen_ai.token.type") {
		case "input":
			return metricPart{add: toInput, requestCount: true}, true
		case "output":
			return metricPart{add: toOutput}, true
		}
		return metricPart{}, false
	},
}

// eventKind is what a log event says.
type eventKind uint8

const (
	eventNone      eventKind = iota
	eventUsage               // a model request and its usage
	eventRateLimit           // an API error of rate limiting or overload
	eventTool                // a tool's result: the agent is working
)

// eventRule reads a log event of name with attributes a.
func eventRule(name string, a attrs) (eventKind, hub.UsageCounts) {
	if rule := eventRules[name]; rule != nil {
		return rule(a)
	}
	return eventNone, hub.UsageCounts{}
}

// eventRules are the log events that say something of usage, rate limits
// or tools, by name (with the host's prefix): what an event with
// attributes a says.
var eventRules = map[string]func(a attrs) (eventKind, hub.UsageCounts){
	"claude_code.api_request": func(a attrs) (eventKind, hub.UsageCounts) {
		return eventUsage, hub.UsageCounts{
			Input: a.count("input_tokens"), Output: a.count("output_tokens"),
			CacheRead: a.count("cache_read_tokens"), CacheCreation: a.count("cache_creation_tokens"),
			Requests: 1, CostUSD: max(a.num("cost_usd"), 0),
		}
	},
	"codex.sse_event": func(a attrs) (eventKind, hub.UsageCounts) {
		if a.str("event.kind") != "response.completed" {
			return eventNone, hub.UsageCounts{}
		}
		cached := a.count("cached_token_count")
		return eventUsage, hub.UsageCounts{
			Input: max(a.count("input_token_count")-cached, 0), CacheRead: cached,
			Output: a.count("output_token_count"), Requests: 1,
		}
	},
	"gemini_cli.api_response": func(a attrs) (eventKind, hub.UsageCounts) {
		cached := a.count("cached_content_token_count")
		return eventUsage, hub.UsageCounts{
			Input:     max(a.count("input_token_count")-cached, 0) + a.count("tool_token_count"),
			CacheRead: cached,
			Output:    a.count("output_token_count") + a.count("thoughts_token_count"),
			Requests:  1,
		}
	},
	"claude_code.api_error":     apiError,
	"gemini_cli.api_error":      apiError,
	"codex.api_request":         apiError,
	"claude_code.tool_result":   toolEvent,
	"claude_code.tool_decision": toolEvent,
	"gemini_cli.tool_call":      toolEvent,
	"codex.tool_result":         toolEvent,
	"codex.tool_decision":       toolEvent,
}

// apiError reads an API error: rate limiting or overload, or nothing.
func apiError(a attrs) (eventKind, hub.UsageCounts) {
	if rateLimited(a) {
		return eventRateLimit, hub.UsageCounts{}
	}
	return eventNone, hub.UsageCounts{}
}

// toolEvent reads a tool's result or decision: the agent is working.
func toolEvent(attrs) (eventKind, hub.UsageCounts) { return eventTool, hub.UsageCounts{} }

// rateLimited reports whether an API error's attributes say rate limiting
// or overload: HTTP 429 (too many requests) or 529 (Anthropic's
// overloaded), or an error text saying so.
func rateLimited(a attrs) bool {
	for _, code := range []string{a.str("status_code"), a.str("http.response.status_code")} {
		switch code {
		case "429", "529":
			return true
		}
	}
	e := strings.ToLower(a.str("error") + " " + a.str("error.message"))
	return strings.Contains(e, "rate limit") || strings.Contains(e, "rate_limit") || strings.Contains(e, "overloaded")
}

// toolName is the tool a tool event names (Claude Code and Codex say
// tool_name, Gemini CLI function_name), as the hub shows it: at most
// maxToolName bytes of letters, digits and _ . : / @ -, any other
// character as "_"; "" when the event names none.
func toolName(a attrs) string {
	n := a.str("tool_name")
	if n == "" {
		n = a.str("function_name")
	}
	var b strings.Builder
	for _, r := range n {
		if b.Len() >= maxToolName {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("_.:/@-", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// maxToolName bounds a tool's name as the hub shows it.
const maxToolName = 64

// toolList is the distinct tools of an export's tool events, in order,
// at most maxTools of them.
type toolList struct {
	names []string
	more  bool
}

// maxTools bounds the tools an activity line names.
const maxTools = 8

func (l *toolList) add(name string) {
	if name == "" || slices.Contains(l.names, name) {
		return
	}
	if len(l.names) == maxTools {
		l.more = true
		return
	}
	l.names = append(l.names, name)
}

// String is the agent's activity line: "tools run (host telemetry): A, B".
func (l toolList) String() string {
	s := "tools run (host telemetry)"
	if len(l.names) > 0 {
		s += ": " + strings.Join(l.names, ", ")
	}
	if l.more {
		s += ", …"
	}
	return s
}
