package hub

import (
	"fmt"
	"strings"
)

// Locale selects the language of the texts the hub writes for agents and
// people: warnings, hints, notes and health findings. The hub has a default
// locale (configuration) and each agent may override it.
type Locale string

// Supported locales.
const (
	LocaleEN Locale = "en" // English, the default
	LocaleJA Locale = "ja" // Japanese, the seeds' own wording
)

// DefaultLocale is the locale used when none is configured.
const DefaultLocale = LocaleEN

// Locales lists the supported locales in a stable order.
var Locales = []Locale{LocaleEN, LocaleJA}

// ParseLocale returns the locale named by s ("en", "ja"; case and
// surrounding spaces ignored, a region such as "ja-JP" accepted). An empty s
// gives DefaultLocale. Any other value returns EINVALID listing the choices.
func ParseLocale(s string) (Locale, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "" {
		return DefaultLocale, nil
	}
	if i := strings.IndexAny(v, "-_"); i > 0 {
		v = v[:i]
	}
	for _, l := range Locales {
		if Locale(v) == l {
			return l, nil
		}
	}
	return "", Errorf(EINVALID, "locale %q is not supported: expected one of en, ja", s)
}

// MsgKey names one text of the catalog.
type MsgKey string

// Catalog keys. Each has an English and a Japanese text; the comment gives
// the arguments the text takes, in order.
const (
	// Elapsed time since a heartbeat began (seed 001).
	MsgElapsedInfo    MsgKey = "elapsed.info"    // minutes int
	MsgElapsedWarning MsgKey = "elapsed.warning" // minutes int
	MsgElapsedRelaxed MsgKey = "elapsed.relaxed" // -

	// Checkpoint responses (seed 000).
	MsgCheckpointRecorded     MsgKey = "checkpoint.recorded"       // heartbeat ID string
	MsgCheckpointDeepWorkHint MsgKey = "checkpoint.deep_work_hint" // elapsed string

	// Deep work declarations.
	MsgDeepWorkStartedFlexible MsgKey = "deep_work.started_flexible" // planned activity string
	MsgDeepWorkStartedStrict   MsgKey = "deep_work.started_strict"   // planned activity string, end heartbeat-style time string, duration string
	MsgDeepWorkReplaced        MsgKey = "deep_work.replaced"         // old mode string, old planned activity string
	MsgDeepWorkCompleted       MsgKey = "deep_work.completed"        // planned activity string
	MsgDeepWorkExpired         MsgKey = "deep_work.expired"          // planned activity string, overrun string

	// Mandatory reflection after deep work.
	MsgReflectionDue       MsgKey = "reflection.due"       // -
	MsgReflectionFulfilled MsgKey = "reflection.fulfilled" // -
	MsgReflectionWaived    MsgKey = "reflection.waived"    // urgent reason string
	MsgReflectionSkipped   MsgKey = "reflection.skipped"   // activity type label string

	// Health findings (SPEC §4).
	MsgFindingInactivityWarning MsgKey = "finding.inactivity_warning" // silence string
	MsgFindingInactivityAnomaly MsgKey = "finding.inactivity_anomaly" // silence string
	MsgFindingReflectionOverdue MsgKey = "finding.reflection_overdue" // time since reflection string
	MsgFindingCheckpointMissing MsgKey = "finding.checkpoint_missing" // silence string
	MsgFindingDeepWorkExpired   MsgKey = "finding.deep_work_expired"  // planned activity string, overrun string
	MsgFindingReflectionSkipped MsgKey = "finding.reflection_skipped" // time since the skip string

	// Event details (hubctl events).
	MsgHealthChanged                MsgKey = "event.health_changed"             // old state, new state, finding kinds
	MsgEventDeepWorkStartedFlexible MsgKey = "event.deep_work_started_flexible" // planned activity
	MsgEventDeepWorkStartedStrict   MsgKey = "event.deep_work_started_strict"   // planned activity, end time
	MsgEventDeepWorkReplaced        MsgKey = "event.deep_work_replaced"         // mode, planned activity
	MsgEventDeepWorkCompletedByLog  MsgKey = "event.deep_work_completed_by_log" // planned activity, log type, log title
	MsgEventDeepWorkExpired         MsgKey = "event.deep_work_expired"          // planned activity, end time
	MsgEventDeepWorkEndedByAdmin    MsgKey = "event.deep_work_ended_by_admin"   // mode, planned activity
	MsgEventReflectionWaived        MsgKey = "event.reflection_waived"          // log type, log title, urgent reason
	MsgEventReflectionSkipped       MsgKey = "event.reflection_skipped"         // log type, log title

	// Activity type labels.
	MsgTypeThinking    MsgKey = "type.thinking"
	MsgTypeObservation MsgKey = "type.observation"
	MsgTypeCreation    MsgKey = "type.creation"
	MsgTypeReflection  MsgKey = "type.reflection"
	MsgTypeOther       MsgKey = "type.other"
)

// catalog holds the format strings (fmt verbs) of every key per locale.
var catalog = map[Locale]map[MsgKey]string{
	LocaleEN: {
		MsgElapsedInfo:    "Elapsed time: %d minutes have passed since this heartbeat began.",
		MsgElapsedWarning: "Split the activity: %d minutes have passed since this heartbeat began. Following the \"small steps\" principle, close this activity with an activity log.",
		MsgElapsedRelaxed: "Deep work declared: warnings relaxed.",

		MsgCheckpointRecorded:     "Checkpoint recorded under heartbeat %s.",
		MsgCheckpointDeepWorkHint: "%s have passed since your last activity log. If this work will take long, declare it with StartDeepWork (start_deep_work): flexible if you can keep writing checkpoints, strict with a planned duration if you cannot.",

		MsgDeepWorkStartedFlexible: "Flexible deep work declared: %q. It lasts until your next activity log; keep writing checkpoints.",
		MsgDeepWorkStartedStrict:   "Strict deep work declared: %q, until %s (%s). Inactivity and reflection checks are paused until then; write an activity log before the end.",
		MsgDeepWorkReplaced:        "The previous %s deep work declaration %q was completed and replaced by this one.",
		MsgDeepWorkCompleted:       "Deep work %q is completed by this activity log.",
		MsgDeepWorkExpired:         "Strict deep work %q expired %s ago without an activity log; all checks have resumed.",

		MsgReflectionDue:       "Reflection is now due: your next activity log must be of type reflection.",
		MsgReflectionFulfilled: "Reflection recorded: the reflection duty after deep work is fulfilled.",
		MsgReflectionWaived:    "Reflection postponed for an emergency (%s): the waiver is recorded and your next activity log must be of type reflection.",
		MsgReflectionSkipped:   "Reflection skipped: the activity log after a completed deep work must be a reflection, but one of type %s was written. An anomaly is recorded; write a reflection log to clear it.",

		MsgFindingInactivityWarning: "No activity log or checkpoint for %s.",
		MsgFindingInactivityAnomaly: "No activity log or checkpoint for %s: the agent may be stuck in a loop or stopped.",
		MsgFindingReflectionOverdue: "No reflection activity log for %s.",
		MsgFindingCheckpointMissing: "Flexible deep work is declared but no activity log or checkpoint for %s: keep writing checkpoints.",
		MsgFindingDeepWorkExpired:   "Strict deep work %q passed its planned end %s ago without an activity log.",
		MsgFindingReflectionSkipped: "The activity log after a completed deep work was not a reflection (%s ago); a reflection log clears this.",

		MsgHealthChanged:                "health %s → %s (%s)",
		MsgEventDeepWorkStartedFlexible: "flexible deep work declared: %q",
		MsgEventDeepWorkStartedStrict:   "strict deep work declared: %q until %s",
		MsgEventDeepWorkReplaced:        "%s deep work %q completed: replaced by a new declaration",
		MsgEventDeepWorkCompletedByLog:  "deep work %q completed by the %s log %q",
		MsgEventDeepWorkExpired:         "strict deep work %q expired: its end %s passed without an activity log",
		MsgEventDeepWorkEndedByAdmin:    "%s deep work %q ended by an admin",
		MsgEventReflectionWaived:        "reflection postponed by the %s log %q for an emergency: %s",
		MsgEventReflectionSkipped:       "reflection skipped: the log after a completed deep work was the %s log %q",

		MsgTypeThinking:    "thinking",
		MsgTypeObservation: "observation",
		MsgTypeCreation:    "creation",
		MsgTypeReflection:  "reflection",
		MsgTypeOther:       "other",
	},
	LocaleJA: {
		MsgElapsedInfo:    "経過時間通知: ハートビート開始から%d分が経過しています。",
		MsgElapsedWarning: "活動分割推奨: ハートビート開始から%d分が経過しています。「小さな一歩」の原則に従い、活動を区切ることを推奨します。",
		MsgElapsedRelaxed: "深い作業宣言中: 宣言により警告が緩和されています。",

		MsgCheckpointRecorded:     "チェックポイントログを作成しました（ハートビートID: %s）。",
		MsgCheckpointDeepWorkHint: "最後の活動ログから%sが経過しています。長時間の作業が見込まれる場合は start_deep_work で深い作業を宣言してください（チェックポイントを残せるなら flexible、残せないなら予定時間付きの strict）。",

		MsgDeepWorkStartedFlexible: "深い作業（flexible）を宣言しました:「%s」。次の活動ログ作成まで有効です。チェックポイントは引き続き作成してください。",
		MsgDeepWorkStartedStrict:   "深い作業（strict）を宣言しました:「%s」。%sまで（%s）有効で、それまで無活動検知と内省不足チェックを停止します。終了時刻までに活動ログを記録してください。",
		MsgDeepWorkReplaced:        "以前の深い作業宣言（%s）「%s」を完了扱いにし、この宣言に置き換えました。",
		MsgDeepWorkCompleted:       "深い作業「%s」はこの活動ログで完了しました。",
		MsgDeepWorkExpired:         "深い作業（strict）「%s」は活動ログがないまま%s前に期限切れになりました。各種チェックを再開しました。",

		MsgReflectionDue:       "内省の義務: 深い作業の後は必ず内省をしてください。次の活動ログは内省である必要があります。",
		MsgReflectionFulfilled: "内省が記録されました。深い作業後の内省義務を果たしました。",
		MsgReflectionWaived:    "緊急対応のため内省を延期しました（理由: %s）。延期は記録され、次の活動ログは内省である必要があります。",
		MsgReflectionSkipped:   "内省スキップ: 深い作業完了後の活動ログは内省である必要がありますが、%sの活動ログが記録されました。異常として記録しました。内省の活動ログを作成すると解除されます。",

		MsgFindingInactivityWarning: "無活動警告: 活動ログまたはチェックポイントが%s作成されていません。",
		MsgFindingInactivityAnomaly: "無活動異常: 活動ログまたはチェックポイントが%s作成されていません。ループにハマっているか異常停止している可能性があります。",
		MsgFindingReflectionOverdue: "内省不足: 内省の活動ログが%s作成されていません。",
		MsgFindingCheckpointMissing: "深い作業（flexible）中ですが、活動ログまたはチェックポイントが%s作成されていません。チェックポイントを作成してください。",
		MsgFindingDeepWorkExpired:   "深い作業（strict）「%s」は活動ログがないまま予定終了時刻を%s超過しています。",
		MsgFindingReflectionSkipped: "深い作業完了後の活動ログが内省ではありませんでした（%s前）。内省の活動ログを作成すると解除されます。",

		MsgHealthChanged:                "健全性 %s → %s（%s）",
		MsgEventDeepWorkStartedFlexible: "深い作業（flexible）を宣言:「%s」",
		MsgEventDeepWorkStartedStrict:   "深い作業（strict）を宣言:「%s」%sまで",
		MsgEventDeepWorkReplaced:        "深い作業（%s）「%s」を完了: 新しい宣言に置き換え",
		MsgEventDeepWorkCompletedByLog:  "深い作業「%s」が活動ログ（%s）「%s」で完了",
		MsgEventDeepWorkExpired:         "深い作業（strict）「%s」が期限切れ: 終了時刻%sまでに活動ログなし",
		MsgEventDeepWorkEndedByAdmin:    "深い作業（%s）「%s」を管理者が終了",
		MsgEventReflectionWaived:        "活動ログ（%s）「%s」により緊急対応のため内省を延期: %s",
		MsgEventReflectionSkipped:       "内省スキップ: 深い作業完了後の活動ログが（%s）「%s」でした",

		MsgTypeThinking:    "思考",
		MsgTypeObservation: "観測",
		MsgTypeCreation:    "創造",
		MsgTypeReflection:  "内省",
		MsgTypeOther:       "その他",
	},
}

// Text returns the catalog text for key in locale l, formatted with args.
// An unknown locale falls back to DefaultLocale; a key missing from the
// catalog (a bug, caught by tests) returns the key itself.
func (l Locale) Text(key MsgKey, args ...any) string {
	texts, ok := catalog[l]
	if !ok {
		texts = catalog[DefaultLocale]
	}
	format, ok := texts[key]
	if !ok {
		format, ok = catalog[DefaultLocale][key]
	}
	if !ok {
		return string(key)
	}
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// Valid reports whether l is a supported locale.
func (l Locale) Valid() bool {
	_, ok := catalog[l]
	return ok
}

// Or returns l if it is a supported locale, else fallback. It resolves a
// per-agent override against the hub's default: agentLocale.Or(hubLocale).
func (l Locale) Or(fallback Locale) Locale {
	if l.Valid() {
		return l
	}
	return fallback
}
