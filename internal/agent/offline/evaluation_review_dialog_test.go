package offline

// reviewDialogCases are conversations from the second held-out review
// (2026-11-26) about the dialogue: answers to a question, follow-ups,
// corrections, and what "it" and "the first one" mean.
var reviewDialogCases = []evalCase{}
