package admission

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
)

// DefaultJoinCodeLimit bounds the attempts made with one join code: a
// fleet registering with one code passes, guessing names with a leaked
// code does not go fast.
var DefaultJoinCodeLimit = RateLimit{PerSecond: 2, Burst: 20}

// CheckJoin is the check of a join call made from its headers, before its
// body is read. The attempt takes from its source address's budget (one
// client sending garbage spends its own budget, and nobody else's); the
// code must be given, within its own budget of attempts, known and usable
// (one indexed read); then the registration takes from the hub-wide
// budget, which bounds how fast agents appear, whatever the codes. Past a
// budget: ResourceExhausted with the wait. source is the caller's address
// ("host:port" or a bare IP; "" when not known).
func (g *Gate) CheckJoin(ctx context.Context, code, source string) error {
	now := g.clock.Now()
	if wait := g.source.take(sourceKey(source), 1, now); wait > 0 {
		return g.joinRefusal(wait, g.source.cfg, "join attempts", "from one address", "--join-source-rate-limit and --join-source-rate-burst")
	}
	if code == "" {
		return refuse(codes.Unauthenticated, textMissingJoin)
	}
	sum := sha256.Sum256([]byte(code))
	if wait := g.code.take(string(sum[:]), 1, now); wait > 0 {
		return g.joinRefusal(wait, g.code.cfg, "join attempts", "with one join code", "--join-code-rate-limit and --join-code-rate-burst")
	}
	err := g.tokens.CheckJoinCode(ctx, code)
	if unreachable(err) {
		return refuseFor(codes.Unavailable, retryAfterStoreMs*time.Millisecond, "the hub cannot reach its store to check the join code: retry shortly")
	} else if err != nil {
		return Status(err)
	}
	if wait := g.join.take(struct{}{}, 1, now); wait > 0 {
		return g.joinRefusal(wait, g.join.cfg, "registrations", "in all", "--join-rate-limit and --join-rate-burst")
	}
	return nil
}

func (g *Gate) joinRefusal(wait time.Duration, rl RateLimit, what, scope, flags string) error {
	return refuseFor(codes.ResourceExhausted, wait, fmt.Sprintf(
		"too many %s: the hub admits %s per second %s (bursts of %d); retry in %s (the hub's %s set this)",
		what, strconv.FormatFloat(rl.PerSecond, 'f', -1, 64), scope, rl.Burst, wait.Round(time.Millisecond), flags))
}

// sourceKey is the budget key of a source address: the IP for IPv4, the
// /64 network for IPv6 (one host holds a whole /64).
func sourceKey(source string) string {
	ap, err := netip.ParseAddrPort(source)
	addr := ap.Addr()
	if err != nil {
		if addr, err = netip.ParseAddr(source); err != nil {
			return source
		}
	}
	addr = addr.Unmap()
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String()
	}
	return addr.String()
}
