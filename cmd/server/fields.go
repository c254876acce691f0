package main

import "github.com/taskchat/taskchat/internal/setting"

// Which environment variable fills which field of a package's
// configuration, by the field's name in the package's errors
// (setting.Error): a package does not know where its configuration comes
// from, so its errors name Go fields, and fromEnv names the variable an
// operator set instead. A field missing here is one no variable fills (it
// is cmd/server's fixed default), and keeps its Go name. A test checks
// that each variable does fill its field.
var (
	// authVars are auth.Config's, as authConfig fills it.
	authVars = map[string]string{
		"Secret":       "JWT_SECRET",
		"Issuer":       "JWT_ISSUER",
		"Audience":     "JWT_AUDIENCE",
		"JWKS.URL":     "JWT_JWKS_URL",
		"JWKS.Refresh": "JWT_JWKS_REFRESH",
	}
	// chatVars are chat.Config's, as chatConfig fills it.
	chatVars = map[string]string{
		"Limits.MaxModelCalls": "AGENT_MAX_MODEL_CALLS",
		"Limits.MaxToolCalls":  "AGENT_MAX_TOOL_CALLS",
		"Limits.MaxTokens":     "AGENT_MAX_TOKENS",
		"Limits.TurnTimeout":   "AGENT_TURN_TIMEOUT",
		"Limits.ToolTimeout":   "AGENT_TOOL_TIMEOUT",
		"HistoryLimit":         "HISTORY_LIMIT",
		"HistoryTokens":        "HISTORY_TOKENS",
		"DailyTokenBudget":     "USER_DAILY_TOKEN_BUDGET",
		"MaxRunningTurns":      "MAX_RUNNING_TURNS_PER_USER",
		"TurnRate.PerMinute":   "RATE_LIMIT_TURNS_PER_MINUTE",
		"TurnRate.Burst":       "RATE_LIMIT_BURST",
		"ApprovalTools":        "APPROVAL_TOOLS",
		"ApprovalTTL":          "APPROVAL_TTL",
	}
)

// fromEnv is err, a package's configuration error, with each field that
// vars names replaced by its environment variable: "Secret must be at
// least 32 bytes" becomes "JWT_SECRET must be at least 32 bytes".
func fromEnv(vars map[string]string, err error) error {
	return setting.Map(err, func(field string) string { return vars[field] })
}
