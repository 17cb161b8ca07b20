// Package admission decides whether a call may run, in one place for every
// entry point of the hub: the gRPC server's tap and interceptors, the REST
// guard, the dashboard's stream and MCP over HTTP. It owns the admission
// table (who may make each RPC and which budget it draws from), the check
// of the caller's credential with the texts of its refusals, and the
// budgets themselves (per-agent token buckets, the slots searches share,
// the join budgets).
package admission

import (
	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

// Who is who may make a call.
type Who uint8

const (
	// Agent calls act as the agent whose token they carry.
	Agent Who = iota + 1
	// Admin calls carry the admin token.
	Admin
	// Joiner calls carry a join code as their credential (JoinHub): the
	// caller becomes an agent by the call.
	Joiner
	// Person calls carry the admin token or a person token (people in
	// the loop: answer the inbox, post, read), never an agent's.
	Person
)

func (w Who) String() string {
	switch w {
	case Agent:
		return "agent"
	case Admin:
		return "admin"
	case Joiner:
		return "joiner"
	case Person:
		return "person"
	}
	return "nobody"
}

// Budget is what a call draws from before it runs.
type Budget uint8

const (
	// None: the call is bounded otherwise (an admin call, a wait, whose
	// number is capped by the waiter limits, is on Read).
	None Budget = iota
	// Write is the caller's budget of writes (--rate-limit).
	Write
	// Read is the caller's budget of reads (--read-rate-limit).
	Read
	// Search is the caller's budget of searches (--search-rate-limit),
	// and a search also takes one of the slots that searches share, so
	// that searching never takes every connection reads need.
	Search
)

func (b Budget) String() string {
	switch b {
	case Write:
		return "writes"
	case Read:
		return "reads"
	case Search:
		return "searches"
	}
	return "none"
}

// Rule is a call's admission: who may make it, which budget it draws
// from, and how many of the budget's tokens one call takes.
type Rule struct {
	Who    Who
	Budget Budget
	Weight int
	// Parks marks the long poll: its handler admits it with Gate.Admit
	// itself, before the interceptors run (see server.waitForMessages),
	// so the interceptor lets it through as admitted.
	Parks bool
}

// table is the admission of every RPC of both services, by full method
// name. TestTableCoversEveryRPC walks the generated service descriptors
// and fails on a method without an entry; a call whose method has none is
// refused.
var table = map[string]Rule{
	// The agent's own liveness.
	hubv1.AgentService_Heartbeat_FullMethodName:               {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_GetStatus_FullMethodName:               {Who: Agent, Budget: Read, Weight: 1},
	hubv1.AgentService_CreateActivityLog_FullMethodName:       {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_Checkpoint_FullMethodName:              {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_StartDeepWork_FullMethodName:           {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_GetDeepWork_FullMethodName:             {Who: Agent, Budget: Read, Weight: 1},
	hubv1.AgentService_GetHeartbeatElapsedTime_FullMethodName: {Who: Agent, Budget: Read, Weight: 1},
	hubv1.AgentService_RespondToPulse_FullMethodName:          {Who: Agent, Budget: Write, Weight: 1},

	// Messages.
	hubv1.AgentService_PostMessage_FullMethodName:        {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_ListMessages_FullMethodName:       {Who: Agent, Budget: Read, Weight: 1},
	hubv1.AgentService_MarkRead_FullMethodName:           {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_WaitForMessages_FullMethodName:    {Who: Agent, Budget: Read, Weight: 1, Parks: true},
	hubv1.AgentService_JoinChannel_FullMethodName:        {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_LeaveChannel_FullMethodName:       {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_AcknowledgeMessage_FullMethodName: {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_GetMessageReceipts_FullMethodName: {Who: Agent, Budget: Read, Weight: 1},
	// What reached the host through a path outside the agent's calls
	// (hooks, channel pushes, the tmux sidecar): one write of marks each.
	hubv1.AgentService_ConfirmDelivery_FullMethodName: {Who: Agent, Budget: Write, Weight: 1},
	// A clean end of a session: presence and paths in memory.
	hubv1.AgentService_EndSession_FullMethodName:     {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_SearchMessages_FullMethodName: {Who: Agent, Budget: Search, Weight: 1},

	// Lists that walk a project's agents or channels cost more than a
	// status: they count several reads.
	hubv1.AgentService_ListPeers_FullMethodName:    {Who: Agent, Budget: Read, Weight: 5},
	hubv1.AgentService_ListChannels_FullMethodName: {Who: Agent, Budget: Read, Weight: 5},

	// Reservations: a list matches paths against patterns, as a
	// reservation does.
	hubv1.AgentService_ReservePaths_FullMethodName:      {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_RenewReservations_FullMethodName: {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_ReleasePaths_FullMethodName:      {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_ListReservations_FullMethodName:  {Who: Agent, Budget: Read, Weight: 5},

	// The task board: next_task may park, bounded by the waits' limits
	// as a wait is; a list walks a page of the board; an edit may walk the
	// graph of dependencies (up to 1,000 tasks) to rule out a cycle.
	hubv1.AgentService_CreateTask_FullMethodName:   {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_ListTasks_FullMethodName:    {Who: Agent, Budget: Read, Weight: 5},
	hubv1.AgentService_GetTask_FullMethodName:      {Who: Agent, Budget: Read, Weight: 1},
	hubv1.AgentService_UpdateTask_FullMethodName:   {Who: Agent, Budget: Write, Weight: 5},
	hubv1.AgentService_ClaimTask_FullMethodName:    {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_NextTask_FullMethodName:     {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_CompleteTask_FullMethodName: {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_BlockTask_FullMethodName:    {Who: Agent, Budget: Write, Weight: 1},

	// Host hooks.
	hubv1.AgentService_TakeInjection_FullMethodName: {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_CheckStop_FullMethodName:     {Who: Agent, Budget: Write, Weight: 1},
	// A hook's report is a read unless the agent's state changes.
	hubv1.AgentService_NoteHostEvent_FullMethodName: {Who: Agent, Budget: Write, Weight: 1},
	// What the caller spent: a report sums a day of rollups.
	hubv1.AgentService_GetUsage_FullMethodName: {Who: Agent, Budget: Read, Weight: 5},

	// People in the loop: an approval or a question parks like a wait
	// (bounded by the inbox's own limit of parked calls).
	hubv1.AgentService_RequestApproval_FullMethodName: {Who: Agent, Budget: Write, Weight: 1},
	hubv1.AgentService_AskHuman_FullMethodName:        {Who: Agent, Budget: Write, Weight: 1},

	// Self-registration: bounded by the join budgets (Gate.CheckJoin).
	hubv1.AgentService_JoinHub_FullMethodName: {Who: Joiner},

	// The admin's calls. The admin token is the operator's: its calls
	// are not rate-limited, but a search shares the search slots.
	hubv1.AdminService_CreateAgent_FullMethodName:             {Who: Admin},
	hubv1.AdminService_ListAgents_FullMethodName:              {Who: Admin},
	hubv1.AdminService_GetAgent_FullMethodName:                {Who: Admin},
	hubv1.AdminService_UpdateAgent_FullMethodName:             {Who: Admin},
	hubv1.AdminService_DisableAgent_FullMethodName:            {Who: Admin},
	hubv1.AdminService_EnableAgent_FullMethodName:             {Who: Admin},
	hubv1.AdminService_RotateToken_FullMethodName:             {Who: Admin},
	hubv1.AdminService_RevokeToken_FullMethodName:             {Who: Admin},
	hubv1.AdminService_DeleteAgent_FullMethodName:             {Who: Admin},
	hubv1.AdminService_PostMessage_FullMethodName:             {Who: Person},
	hubv1.AdminService_ListMessages_FullMethodName:            {Who: Person},
	hubv1.AdminService_ListChannels_FullMethodName:            {Who: Person},
	hubv1.AdminService_SearchMessages_FullMethodName:          {Who: Admin, Budget: Search, Weight: 1},
	hubv1.AdminService_GetMessageReceipts_FullMethodName:      {Who: Admin},
	hubv1.AdminService_PruneMessages_FullMethodName:           {Who: Admin},
	hubv1.AdminService_GetAgentHealth_FullMethodName:          {Who: Admin},
	hubv1.AdminService_ListEvents_FullMethodName:              {Who: Admin},
	hubv1.AdminService_ListDeepWork_FullMethodName:            {Who: Admin},
	hubv1.AdminService_EndDeepWork_FullMethodName:             {Who: Admin},
	hubv1.AdminService_ListActivity_FullMethodName:            {Who: Admin},
	hubv1.AdminService_ListAgentOverviews_FullMethodName:      {Who: Person},
	hubv1.AdminService_Nudge_FullMethodName:                   {Who: Admin},
	hubv1.AdminService_GetBeat_FullMethodName:                 {Who: Admin},
	hubv1.AdminService_SetPulseConfig_FullMethodName:          {Who: Admin},
	hubv1.AdminService_ListPulses_FullMethodName:              {Who: Admin},
	hubv1.AdminService_TriggerPulse_FullMethodName:            {Who: Admin},
	hubv1.AdminService_CreateCronJob_FullMethodName:           {Who: Admin},
	hubv1.AdminService_ListCronJobs_FullMethodName:            {Who: Admin},
	hubv1.AdminService_DeleteCronJob_FullMethodName:           {Who: Admin},
	hubv1.AdminService_SetCronJobEnabled_FullMethodName:       {Who: Admin},
	hubv1.AdminService_RunCronJob_FullMethodName:              {Who: Admin},
	hubv1.AdminService_ListCronRuns_FullMethodName:            {Who: Admin},
	hubv1.AdminService_GetHubInfo_FullMethodName:              {Who: Person},
	hubv1.AdminService_Backup_FullMethodName:                  {Who: Admin},
	hubv1.AdminService_ListReservations_FullMethodName:        {Who: Admin},
	hubv1.AdminService_ForceReleaseReservation_FullMethodName: {Who: Admin},
	hubv1.AdminService_ReservePaths_FullMethodName:            {Who: Admin},
	hubv1.AdminService_CreateJoinCode_FullMethodName:          {Who: Admin},
	hubv1.AdminService_ListJoinCodes_FullMethodName:           {Who: Admin},
	hubv1.AdminService_RevokeJoinCode_FullMethodName:          {Who: Admin},
	hubv1.AdminService_CreateProject_FullMethodName:           {Who: Admin},
	hubv1.AdminService_ListProjects_FullMethodName:            {Who: Person},
	hubv1.AdminService_LinkProjects_FullMethodName:            {Who: Admin},
	hubv1.AdminService_UnlinkProjects_FullMethodName:          {Who: Admin},
	hubv1.AdminService_CreateTask_FullMethodName:              {Who: Admin},
	hubv1.AdminService_ListTasks_FullMethodName:               {Who: Admin},
	hubv1.AdminService_GetTask_FullMethodName:                 {Who: Admin},
	hubv1.AdminService_UpdateTask_FullMethodName:              {Who: Admin},
	hubv1.AdminService_ImportTasks_FullMethodName:             {Who: Admin},
	hubv1.AdminService_SetTaskLease_FullMethodName:            {Who: Admin},

	// People in the loop. The admin token or a person token answers the
	// inbox (and reads, posts: above, with GetHubInfo, the agents'
	// overviews and the projects the dashboard shows); webhooks and
	// people are the admin's.
	hubv1.AdminService_ListInbox_FullMethodName:             {Who: Person},
	hubv1.AdminService_AnswerInboxItem_FullMethodName:       {Who: Person},
	hubv1.AdminService_ListApprovalRules_FullMethodName:     {Who: Person},
	hubv1.AdminService_RevokeApprovalRule_FullMethodName:    {Who: Person},
	hubv1.AdminService_CreateWebhook_FullMethodName:         {Who: Admin},
	hubv1.AdminService_ListWebhooks_FullMethodName:          {Who: Admin},
	hubv1.AdminService_DeleteWebhook_FullMethodName:         {Who: Admin},
	hubv1.AdminService_ListWebhookDeliveries_FullMethodName: {Who: Admin},
	hubv1.AdminService_CreatePerson_FullMethodName:          {Who: Admin},
	hubv1.AdminService_ListPeople_FullMethodName:            {Who: Admin},
	hubv1.AdminService_RevokePerson_FullMethodName:          {Who: Admin},
	hubv1.AdminService_ListUsage_FullMethodName:             {Who: Admin},
}

// OTLPExport is the admission of an export of an agent's host's own
// telemetry to the hub's OTLP receiver (/otlp/v1/metrics, logs, traces):
// the agent's token, one write of its budget (a host exports every few
// seconds at most).
var OTLPExport = Rule{Who: Agent, Budget: Write, Weight: 1}

// Lookup returns the admission of the RPC named by its full method name
// ("/hub.v1.AgentService/PostMessage"); ok is false for a method the table
// does not know, which no entry point admits.
func Lookup(fullMethod string) (r Rule, ok bool) {
	r, ok = table[fullMethod]
	return r, ok
}
