package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agenthub/hub/internal/termtext"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// jsonOpts is hubctl's JSON: the REST API's (proto field names, every field).
var jsonOpts = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// table prints rows under headers, aligned.
func (c *cli) table(headers []string, rows [][]string) {
	tw := tabwriter.NewWriter(c.out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = oneLine(v)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// fields prints "key: value" lines, aligned; empty values print as "-".
func (c *cli) fields(kv ...string) {
	tw := tabwriter.NewWriter(c.out, 0, 8, 1, ' ', 0)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[i], dash(kv[i+1]))
	}
	tw.Flush()
}

// printProto prints m as indented JSON with proto field names.
func (c *cli) printProto(m proto.Message) error {
	b, err := protoJSON(m)
	if err != nil {
		return err
	}
	return c.printRaw(b)
}

// protoJSON marshals m in hubctl's JSON format (compact).
func protoJSON(m proto.Message) (json.RawMessage, error) {
	b, err := jsonOpts.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	// protojson's whitespace is deliberately unstable; normalise it.
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// printJSON prints v (anything encoding/json takes; use json.RawMessage
// from protoJSON to embed protos) as indented JSON.
func (c *cli) printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	return c.printRaw(b)
}

func (c *cli) printRaw(b []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return err
	}
	return c.writeJSON(buf.Bytes())
}

// printJSONLine prints m as one compact JSON line (for streams: --follow, watch).
func (c *cli) printJSONLine(m proto.Message) error {
	b, err := protoJSON(m)
	if err != nil {
		return err
	}
	return c.writeJSON(b)
}

// writeJSON writes the JSON text b and a newline, with what a terminal
// would act on written as \u escapes: the same JSON value, exactly, where
// the sanitizer would have removed characters from strings.
func (c *cli) writeJSON(b []byte) error {
	_, err := c.out.Write(append(termtext.EscapeJSON(b), '\n'))
	return err
}

// dash returns s, or "-" when s is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine flattens newlines and tabs so a value fits one table cell.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return strings.NewReplacer("\r\n", " ⏎ ", "\n", " ⏎ ", "\r", " ", "\t", " ").Replace(s)
}

// truncate cuts s to n runes with an ellipsis.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// fmtTime formats a timestamp in local time ("2006-01-02 15:04:05"), "-" if unset.
func fmtTime(t *timestamppb.Timestamp) string {
	if t == nil || (t.Seconds == 0 && t.Nanos == 0) {
		return "-"
	}
	return t.AsTime().Local().Format("2006-01-02 15:04:05")
}

// fmtAgo formats the time since t relative to now ("12s ago", "3m ago"), "-" if unset.
func fmtAgo(t *timestamppb.Timestamp, now time.Time) string {
	if t == nil || (t.Seconds == 0 && t.Nanos == 0) {
		return "-"
	}
	d := now.Sub(t.AsTime())
	if d < 0 {
		return "in " + fmtDuration(-d)
	}
	return fmtDuration(d) + " ago"
}

// fmtDuration formats d coarsely: 45s, 3m15s, 2h5m, 3d4h.
func fmtDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		m, s := int(d.Minutes()), int(d.Seconds())%60
		if s == 0 {
			return fmt.Sprintf("%dm", m)
		}
		return fmt.Sprintf("%dm%ds", m, s)
	case d < 48*time.Hour:
		h, m := int(d.Hours()), int(d.Minutes())%60
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	days, h := int(d.Hours())/24, int(d.Hours())%24
	return fmt.Sprintf("%dd%dh", days, h)
}

// yesNo returns "yes" or "" (printed as "-" in fields).
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
