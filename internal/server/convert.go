package server

import (
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
	"github.com/agenthub/hub/internal/version"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ts converts a time to a timestamp; the zero time is nil (absent in JSON).
func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// fromTS converts a timestamp to a time; nil is the zero time.
func fromTS(t *timestamppb.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.AsTime()
}

func agentToProto(a *hub.Agent) *hubv1.Agent {
	if a == nil {
		return nil
	}
	return &hubv1.Agent{
		Name:                a.Name,
		DisplayName:         a.DisplayName,
		Role:                a.Role,
		Description:         a.Description,
		CreatedAt:           ts(a.CreatedAt),
		DisabledAt:          ts(a.DisabledAt),
		Disabled:            a.Disabled(),
		CurrentHeartbeatId:  a.CurrentHeartbeatID,
		LastSeenAt:          ts(a.LastSeenAt),
		Locale:              a.Locale,
		LastInteractionBeat: a.LastInteractionBeat,
		Project:             hub.ProjectOr(a.Project),
	}
}

func messageToProto(m *hub.Message) *hubv1.Message {
	if m == nil {
		return nil
	}
	return &hubv1.Message{
		Id:          hub.FormatMessageID(m.ID),
		From:        m.From,
		To:          m.To,
		Channel:     m.Channel,
		Body:        m.Body,
		Mentions:    m.Mentions,
		ReplyTo:     hub.FormatMessageID(m.ReplyTo),
		CreatedAt:   ts(m.CreatedAt),
		Kind:        m.Kind,
		Unread:      m.Unread,
		MentionsYou: m.MentionsYou,
		Priority:    hubv1.Priority(m.Priority),
		AckRequired: m.AckRequired,
		Project:     hub.ProjectOr(m.Project),
		SenderKind:  senderKinds[m.SenderKind],
	}
}

// senderKinds are the API's names of the kinds of sender.
var senderKinds = map[hub.SenderKind]hubv1.SenderKind{
	hub.ByAgent: hubv1.SenderKind_SENDER_KIND_AGENT, hub.ByPerson: hubv1.SenderKind_SENDER_KIND_PERSON,
	hub.ByAdmin: hubv1.SenderKind_SENDER_KIND_ADMIN, hub.ByHub: hubv1.SenderKind_SENDER_KIND_HUB,
}

func messagesToProto(ms []*hub.Message) []*hubv1.Message {
	out := make([]*hubv1.Message, len(ms))
	for i, m := range ms {
		out[i] = messageToProto(m)
	}
	return out
}

func findingsToProto(fs []hub.Finding) []*hubv1.Finding {
	out := make([]*hubv1.Finding, len(fs))
	for i, f := range fs {
		out[i] = &hubv1.Finding{Kind: string(f.Kind), Severity: string(f.Severity), Since: ts(f.Since), Text: f.Text}
	}
	return out
}

// DeepWorkToProto converts a deep work declaration (nil stays nil).
func DeepWorkToProto(d *hub.DeepWork) *hubv1.DeepWork {
	if d == nil {
		return nil
	}
	return &hubv1.DeepWork{
		Id:              hub.FormatMessageID(d.ID),
		Mode:            string(d.Mode),
		PlannedActivity: d.PlannedActivity,
		StartedAt:       ts(d.StartedAt),
		EndsAt:          ts(d.EndsAt),
		State:           string(d.State),
		EndedAt:         ts(d.EndedAt),
		HeartbeatId:     d.HeartbeatID,
	}
}

func statusToProto(st *hub.Status) *hubv1.Status {
	if st == nil {
		return nil
	}
	return &hubv1.Status{
		Agent:              st.Agent,
		UnreadCount:        st.Unread,
		MentionCount:       st.Mentions,
		CurrentHeartbeatId: st.CurrentHeartbeatID,
		Beat:               st.Beat,
		SinceLast:          st.SinceLast,
		SinceLastReading:   st.SinceLastReading,
		Health:             string(st.Health.State),
		Findings:           findingsToProto(st.Health.Findings),
		Online:             st.Online,
		Waiting:            st.Waiting,
		HubVersion:         version.Version(),
		HubTime:            ts(st.Time),
		LatestMessageId:    hub.FormatMessageID(st.LatestMessageID),
		DeepWork:           DeepWorkToProto(st.DeepWork),
		RateLimitedUntil:   ts(st.RateLimitedUntil),
	}
}
