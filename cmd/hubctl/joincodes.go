package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/loopback"
)

// joinCodesCreate creates a join code and prints it once with the lines an
// agent's machine runs: `hubctl join-codes create [--expires 24h]
// [--max-uses N] [--role R] [--note T] [--hub-addr HOST:PORT]`.
func joinCodesCreate(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("join-codes create")
	expires := fs.Duration("expires", 24*time.Hour, "how long the code registers agents (1m to 8784h)")
	maxUses := fs.Int64("max-uses", 1, "how many agents it may register (1 to 10000)")
	role := fs.String("role", "", "role of every agent it registers, e.g. coder, reviewer")
	note := fs.String("note", "", "what the code is for (shown by join-codes list)")
	project := fs.String("project", "", "project of every agent it registers (default: default)")
	hubAddr := fs.String("hub-addr", "", "the hub's gRPC address as the agents' machines reach it, put in the printed lines (default: --addr)")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("join-codes create takes flags only, got %q", pos)
	}
	if *expires <= 0 {
		return usageErrorf("--expires %v: give a positive duration such as 24h", *expires)
	}
	if *hubAddr == "" {
		*hubAddr = c.addr
	}
	if _, _, err := net.SplitHostPort(*hubAddr); err != nil {
		return usageErrorf("--hub-addr %q: give HOST:PORT, the hub's gRPC address as the agents' machines reach it", *hubAddr)
	}
	info, err := c.admin.GetHubInfo(ctx, &hubv1.GetHubInfoRequest{})
	if err != nil {
		return err
	}
	r, err := c.admin.CreateJoinCode(ctx, &hubv1.CreateJoinCodeRequest{
		Role: *role, Note: *note, MaxUses: *maxUses, ExpiresInSeconds: int64(expires.Round(time.Second) / time.Second), Project: *project,
	})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	jc := r.GetJoinCode()
	fmt.Fprintf(c.out, "Created join code %s: %d %s, role %s, expires %s.\n", jc.GetId(), jc.GetMaxUses(),
		map[bool]string{true: "use", false: "uses"}[jc.GetMaxUses() == 1], dash(jc.GetRole()), fmtTime(jc.GetExpiresAt()))
	fmt.Fprintf(c.out, "\nCode (shown once; the hub keeps only a hash):\n  %s\n", r.GetCode())
	addr := ""
	if *hubAddr != defaultAddr {
		addr = " --addr " + *hubAddr
	}
	fmt.Fprintf(c.out, "\nAn agent registers itself once (its token is kept in a 0600 file):\n  hub mcp%s --join %s --name NAME\n", addr, r.GetCode())
	fmt.Fprintf(c.out, "\nOr, on the agent's machine, set up its host (claude, codex or gemini) in one line, adding --name NAME:\n  %s\n", setupLine(*hubAddr, r.GetCode(), info.GetCaFingerprint()))
	if info.GetCaFingerprint() != "" && loopback.Addr(*hubAddr) {
		fmt.Fprintln(c.out, "(the address is this machine's own: give --hub-addr HOST:PORT, the address the agents' machines reach the hub at)")
	}
	return nil
}

// setupLine is the `hub setup` line that registers an agent with code at
// the hub at addr and, when the hub serves TLS with its own CA, pins that
// CA by its fingerprint.
func setupLine(addr, code, fingerprint string) string {
	line := "hub setup claude --addr " + addr + " --join " + code
	if fingerprint != "" {
		line += " --ca-fingerprint " + fingerprint
	}
	return line
}

// joinCodesList lists the join codes: `hubctl join-codes list`.
func joinCodesList(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("join-codes list")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("join-codes list takes no arguments, got %q", pos)
	}
	r, err := c.admin.ListJoinCodes(ctx, &hubv1.ListJoinCodesRequest{})
	if err != nil {
		return err
	}
	if c.json {
		return c.printProto(r)
	}
	if len(r.GetJoinCodes()) == 0 {
		fmt.Fprintln(c.out, "no join codes (create one with hubctl join-codes create)")
		return nil
	}
	rows := make([][]string, 0, len(r.GetJoinCodes()))
	for _, jc := range r.GetJoinCodes() {
		rows = append(rows, []string{jc.GetId(), jc.GetState(), fmt.Sprintf("%d/%d", jc.GetUses(), jc.GetMaxUses()),
			dash(jc.GetRole()), fmtTime(jc.GetExpiresAt()), fmtTime(jc.GetCreatedAt()), dash(truncate(oneLine(jc.GetNote()), 40))})
	}
	c.table([]string{"ID", "STATE", "USES", "ROLE", "EXPIRES", "CREATED", "NOTE"}, rows)
	return nil
}

// joinCodesRevoke revokes join codes by ID: `hubctl join-codes revoke ID...`.
func joinCodesRevoke(ctx context.Context, c *cli, args []string) error {
	fs := c.flags("join-codes revoke")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("give one or more join code IDs (hubctl join-codes list shows them)")
	}
	for _, id := range pos {
		if _, err := strconv.ParseInt(id, 10, 64); err != nil {
			return usageErrorf("join code ID %q is not a number (hubctl join-codes list shows the IDs)", id)
		}
	}
	var done []*hubv1.JoinCode
	for _, id := range pos {
		r, err := c.admin.RevokeJoinCode(ctx, &hubv1.RevokeJoinCodeRequest{Id: id})
		if err != nil {
			return fmt.Errorf("revoke %s: %w", id, err)
		}
		done = append(done, r.GetJoinCode())
		if !c.json {
			fmt.Fprintf(c.out, "revoked join code %s (%d of %d uses taken); the agents it registered keep their tokens\n", id, r.GetJoinCode().GetUses(), r.GetJoinCode().GetMaxUses())
		}
	}
	if c.json {
		return c.printProto(&hubv1.ListJoinCodesResponse{JoinCodes: done})
	}
	return nil
}
