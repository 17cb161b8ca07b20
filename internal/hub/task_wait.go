package hub

// taskWait is one parked next_task call. It holds a Waiter of the hub's
// registry (so it counts against the waits' limits and shows its agent as
// waiting), whose channel a ready task that fits it signals; the registry
// also keeps it by project (wakeTask, wakeProject).
type taskWait struct {
	project string
	labels  []string
	role    string
	w       *Waiter
}

// parkTask keeps tw by its project until the returned function is called.
func (ws *Waiters) parkTask(tw *taskWait) func() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	m := ws.tasks[tw.project]
	if m == nil {
		m = map[*taskWait]struct{}{}
		ws.tasks[tw.project] = m
	}
	m[tw] = struct{}{}
	return func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		m := ws.tasks[tw.project]
		delete(m, tw)
		if len(m) == 0 {
			delete(ws.tasks, tw.project)
		}
	}
}

// wakeTask wakes the parked next_task calls that ready task t fits: each
// looks again, one claims it, the others park again.
func (ws *Waiters) wakeTask(t *Task) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for tw := range ws.tasks[t.Project] {
		if TaskFits(t, tw.labels, tw.role) {
			tw.w.signal()
		}
	}
}

// wakeProject wakes every parked next_task call of project.
func (ws *Waiters) wakeProject(project string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for tw := range ws.tasks[project] {
		tw.w.signal()
	}
}
