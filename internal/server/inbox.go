package server

import (
	"context"
	"strconv"
	"time"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
	"github.com/agenthub/hub/internal/hub"
)

// postSender is who a people's post comes from: "admin" for the admin
// token, the person's own name for a person token.
func postSender(ctx context.Context) string {
	if p, _ := ctx.Value(personKey{}).(*hub.Person); p != nil {
		return p.Name
	}
	return hub.SenderAdmin
}

// parseID reads an inbox item's, a rule's or a webhook's ID.
func parseID(what, s, list string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, hub.Errorf(hub.EINVALID, "%s ID %q is invalid: give the number %s shows", what, s, list)
	}
	return id, nil
}

func id(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

func itemToProto(it *hub.InboxItem) *hubv1.InboxItem {
	if it == nil {
		return nil
	}
	return &hubv1.InboxItem{
		Id: id(it.ID), Kind: string(it.Kind), Agent: it.AgentName, Project: it.Project, Title: it.Title, Body: it.Body,
		Tool: it.Tool, Options: it.Options, Urgency: string(it.Urgency), State: string(it.State), CreatedAt: ts(it.CreatedAt),
		AnsweredAt: ts(it.AnsweredAt), AnsweredBy: it.AnsweredBy, Decision: it.Decision, Answer: it.Answer, Remember: it.Remember, SuggestedRule: it.SuggestedRule,
		RanAt: ts(it.RanAt),
	}
}

// RequestApproval implements hubv1.AgentServiceServer.
func (a *AgentServer) RequestApproval(ctx context.Context, req *hubv1.RequestApprovalRequest) (*hubv1.RequestApprovalResponse, error) {
	secs := req.GetWaitSeconds()
	if secs <= 0 {
		return nil, hub.Errorf(hub.EINVALID, "wait_seconds %d: give how long to wait for a person, 1-600 seconds", secs)
	}
	r, err := a.s.svc.Inbox.RequestApproval(ctx, Caller(ctx), hub.ApprovalRequest{
		Tool: req.GetTool(), Input: req.GetInput(), CallKey: req.GetCallKey(), Wait: time.Duration(secs) * time.Second, SuggestedRule: req.GetSuggestedRule(),
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.RequestApprovalResponse{Item: itemToProto(r.Item), TimedOut: r.TimedOut}, nil
}

// AskHuman implements hubv1.AgentServiceServer.
func (a *AgentServer) AskHuman(ctx context.Context, req *hubv1.AskHumanRequest) (*hubv1.AskHumanResponse, error) {
	r, err := a.s.svc.Inbox.AskHuman(ctx, Caller(ctx), hub.QuestionRequest{
		Question: req.GetQuestion(), Options: req.GetOptions(), Urgency: req.GetUrgency(), TimeoutSeconds: req.TimeoutSeconds,
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.AskHumanResponse{Item: itemToProto(r.Item), TimedOut: r.TimedOut}, nil
}

// NoteHostEvent implements hubv1.AgentServiceServer.
func (a *AgentServer) NoteHostEvent(ctx context.Context, req *hubv1.NoteHostEventRequest) (*hubv1.NoteHostEventResponse, error) {
	err := a.s.svc.Inbox.NoteHost(ctx, Caller(ctx), hub.HostEvent(req.GetEvent()), req.GetText(), req.GetCallKey())
	if err != nil {
		return nil, err
	}
	return &hubv1.NoteHostEventResponse{}, nil
}

// ListInbox implements hubv1.AdminServiceServer.
func (a *AdminServer) ListInbox(ctx context.Context, req *hubv1.ListInboxRequest) (*hubv1.ListInboxResponse, error) {
	items, next, err := a.s.svc.Inbox.ListItems(ctx, personOf(ctx), req.GetState(), req.GetProject(), int(req.GetLimit()), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.InboxItem, len(items))
	for i, it := range items {
		out[i] = itemToProto(it)
	}
	return &hubv1.ListInboxResponse{Items: out, NextPageToken: next}, nil
}

// AnswerInboxItem implements hubv1.AdminServiceServer: the answer is the
// caller's, a person's or the operator's (the admin token).
func (a *AdminServer) AnswerInboxItem(ctx context.Context, req *hubv1.AnswerInboxItemRequest) (*hubv1.AnswerInboxItemResponse, error) {
	n, err := parseID("inbox item", req.GetId(), "`hubctl inbox`")
	if err != nil {
		return nil, err
	}
	it, err := a.s.svc.Inbox.AnswerItem(ctx, personOf(ctx), n, hub.Answer{
		Decision: req.GetDecision(), Message: req.GetMessage(), Remember: req.GetRemember(), WholeTool: req.GetRememberWholeTool(), Text: req.GetAnswer(),
		USDPerDay: req.GetUsdPerDay(), TokensPerDay: req.GetTokensPerDay(),
	})
	if err != nil {
		return nil, err
	}
	return &hubv1.AnswerInboxItemResponse{Item: itemToProto(it)}, nil
}

// ListApprovalRules implements hubv1.AdminServiceServer.
func (a *AdminServer) ListApprovalRules(ctx context.Context, req *hubv1.ListApprovalRulesRequest) (*hubv1.ListApprovalRulesResponse, error) {
	rs, err := a.s.svc.Inbox.ListRules(ctx, personOf(ctx), req.GetAll())
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.ApprovalRule, len(rs))
	for i, r := range rs {
		out[i] = &hubv1.ApprovalRule{Id: id(r.ID), Project: r.Project, Agent: r.AgentName, Tool: r.Tool, CreatedBy: r.CreatedBy,
			CreatedAt: ts(r.CreatedAt), ExpiresAt: ts(r.ExpiresAt), RevokedAt: ts(r.RevokedAt), ItemId: id(r.ItemID), Covers: r.Covers, Pattern: r.Pattern}
	}
	return &hubv1.ListApprovalRulesResponse{Rules: out}, nil
}

// RevokeApprovalRule implements hubv1.AdminServiceServer.
func (a *AdminServer) RevokeApprovalRule(ctx context.Context, req *hubv1.RevokeApprovalRuleRequest) (*hubv1.RevokeApprovalRuleResponse, error) {
	n, err := parseID("rule", req.GetId(), "`hubctl inbox rules`")
	if err != nil {
		return nil, err
	}
	if err := a.s.svc.Inbox.RevokeRule(ctx, personOf(ctx), n); err != nil {
		return nil, err
	}
	return &hubv1.RevokeApprovalRuleResponse{}, nil
}

func webhookToProto(w *hub.Webhook) *hubv1.Webhook {
	kinds := make([]string, len(w.Kinds))
	for i, k := range w.Kinds {
		kinds[i] = string(k)
	}
	return &hubv1.Webhook{Id: id(w.ID), Url: w.URL, Kinds: kinds, Projects: w.Projects, CreatedAt: ts(w.CreatedAt)}
}

// CreateWebhook implements hubv1.AdminServiceServer.
func (a *AdminServer) CreateWebhook(ctx context.Context, req *hubv1.CreateWebhookRequest) (*hubv1.CreateWebhookResponse, error) {
	w := &hub.Webhook{URL: req.GetUrl(), Projects: req.GetProjects(), Secret: req.GetSecret()}
	for _, k := range req.GetKinds() {
		w.Kinds = append(w.Kinds, hub.ItemKind(k))
	}
	w, err := a.s.svc.Webhooks.CreateWebhook(ctx, w)
	if err != nil {
		return nil, err
	}
	return &hubv1.CreateWebhookResponse{Webhook: webhookToProto(w), Secret: w.Secret}, nil
}

// ListWebhooks implements hubv1.AdminServiceServer.
func (a *AdminServer) ListWebhooks(ctx context.Context, _ *hubv1.ListWebhooksRequest) (*hubv1.ListWebhooksResponse, error) {
	ws, err := a.s.svc.Webhooks.ListWebhooks(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.Webhook, len(ws))
	for i, w := range ws {
		out[i] = webhookToProto(w)
	}
	return &hubv1.ListWebhooksResponse{Webhooks: out}, nil
}

// DeleteWebhook implements hubv1.AdminServiceServer.
func (a *AdminServer) DeleteWebhook(ctx context.Context, req *hubv1.DeleteWebhookRequest) (*hubv1.DeleteWebhookResponse, error) {
	n, err := parseID("webhook", req.GetId(), "`hubctl webhooks list`")
	if err != nil {
		return nil, err
	}
	if err := a.s.svc.Webhooks.DeleteWebhook(ctx, n); err != nil {
		return nil, err
	}
	return &hubv1.DeleteWebhookResponse{}, nil
}

// ListWebhookDeliveries implements hubv1.AdminServiceServer.
func (a *AdminServer) ListWebhookDeliveries(ctx context.Context, req *hubv1.ListWebhookDeliveriesRequest) (*hubv1.ListWebhookDeliveriesResponse, error) {
	var n int64
	if req.GetWebhookId() != "" {
		var err error
		if n, err = parseID("webhook", req.GetWebhookId(), "`hubctl webhooks list`"); err != nil {
			return nil, err
		}
	}
	ds, err := a.s.svc.Webhooks.Deliveries(ctx, n, int(req.GetLimit()))
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.WebhookDelivery, len(ds))
	for i, d := range ds {
		out[i] = &hubv1.WebhookDelivery{Id: id(d.ID), WebhookId: id(d.WebhookID), ItemId: id(d.ItemID), Status: d.Status,
			Attempts: int32(d.Attempts), Code: int32(d.Code), Error: d.Error, CreatedAt: ts(d.CreatedAt), DoneAt: ts(d.DoneAt)}
	}
	return &hubv1.ListWebhookDeliveriesResponse{Deliveries: out}, nil
}

func personToProto(p *hub.Person) *hubv1.Person {
	return &hubv1.Person{Name: p.Name, CreatedAt: ts(p.CreatedAt), RevokedAt: ts(p.RevokedAt), Projects: p.Projects}
}

// CreatePerson implements hubv1.AdminServiceServer.
func (a *AdminServer) CreatePerson(ctx context.Context, req *hubv1.CreatePersonRequest) (*hubv1.CreatePersonResponse, error) {
	p, tok, err := a.s.svc.People.CreatePerson(ctx, req.GetName(), req.GetProjects())
	if err != nil {
		return nil, err
	}
	return &hubv1.CreatePersonResponse{Person: personToProto(p), Token: tok}, nil
}

// ListPeople implements hubv1.AdminServiceServer.
func (a *AdminServer) ListPeople(ctx context.Context, _ *hubv1.ListPeopleRequest) (*hubv1.ListPeopleResponse, error) {
	ps, err := a.s.svc.People.ListPeople(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*hubv1.Person, len(ps))
	for i, p := range ps {
		out[i] = personToProto(p)
	}
	return &hubv1.ListPeopleResponse{People: out}, nil
}

// RevokePerson implements hubv1.AdminServiceServer.
func (a *AdminServer) RevokePerson(ctx context.Context, req *hubv1.RevokePersonRequest) (*hubv1.RevokePersonResponse, error) {
	if err := a.s.svc.People.RevokePerson(ctx, req.GetName()); err != nil {
		return nil, err
	}
	return &hubv1.RevokePersonResponse{}, nil
}
